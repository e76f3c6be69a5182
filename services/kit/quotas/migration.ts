import { Migration } from "@mikro-orm/migrations";
import type { MigrationObject } from "@mikro-orm/core";

/**
 * The kit's quotas (`quotas.ts`): what each (quota, key) holds, per fixed window or as a standing total (its window
 * the epoch, never ending), and the reservations taken from it until they are settled, released or expired.
 */
class KitQuotas extends Migration {
  override up(): void {
    this.addSql(`create table quota_usage (
      name text not null,
      key text not null,
      window_start timestamptz not null,
      ends_at timestamptz,
      used bigint not null,
      primary key (name, key, window_start),
      constraint quota_usage_used_check check (used >= 0)
    )`);
    this.addSql(`create table quota_reservations (
      id text primary key,
      name text not null,
      key text not null,
      window_start timestamptz not null,
      units bigint not null,
      holder text,
      touched_at timestamptz not null,
      expired boolean not null default false,
      constraint quota_reservations_units_check check (units >= 0)
    )`);
    // The sweep's scan: reservations of a quota by when they were last touched.
    this.addSql(`create index quota_reservations_by_touched_at on quota_reservations (name, touched_at)`);
  }
}

export const kitQuotasMigration: MigrationObject = {
  name: "Migration00000000000007_kit_quotas",
  class: KitQuotas,
};
