import { Migration } from "@mikro-orm/migrations";

/**
 * The per-app quotas move to the kit's quotas (`quota_usage`, `quota_reservations`, migrated before this): each
 * namespace's usage becomes its standing totals `media.bytes` and `media.files`, each upload under way two
 * reservations held for its key (abandoned ones already expired), then the media tables go.
 */
export class Migration20261217000000_media_kit_quotas extends Migration {
  override up(): void {
    for (const [unit, column] of [
      ["bytes", "bytes"],
      ["files", "files"],
    ]) {
      this.addSql(`insert into quota_usage (name, key, window_start, ends_at, used)
        select 'media.${unit}', app, 'epoch', null, ${column} from app_usage`);
    }
    for (const [unit, units] of [
      ["bytes", "reserved"],
      ["files", "1"],
    ]) {
      this.addSql(`insert into quota_reservations (id, name, key, window_start, units, holder, touched_at, expired)
        select 'qrs_${unit}_' || key, 'media.${unit}', app, 'epoch', ${units}, key, touched_at, abandoned from uploads`);
    }
    this.addSql(`drop table uploads`);
    this.addSql(`drop table app_usage`);
  }
}
