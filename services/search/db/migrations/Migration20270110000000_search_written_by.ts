import { Migration } from "@mikro-orm/migrations";

/**
 * Which transaction last wrote each document: every search instance keeps its in-memory index current by reading
 * the rows of the transactions its previous look could not see (those running then, or begun after: the
 * snapshot's xip and xmax), so a write committed late, by any instance, is never skipped (a sequence could be).
 */
export class Migration20270110000000_search_written_by extends Migration {
  override up(): void {
    this.addSql(`alter table documents add column written_by xid8 not null default pg_current_xact_id()`);
    this.addSql(`create index documents_written_by on documents (written_by, owner, type, id)`);
  }
}
