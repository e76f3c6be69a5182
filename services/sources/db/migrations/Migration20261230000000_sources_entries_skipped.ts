import { Migration } from "@mikro-orm/migrations";

/**
 * Each run counts the fetched entries it left out (`entries_skipped`: a field over its cap, or no identity that
 * fits). Runs before this counted none.
 */
export class Migration20261230000000_sources_entries_skipped extends Migration {
  override up(): void {
    this.addSql(`alter table fetch_runs add column entries_skipped int not null default 0`);
    this.addSql(`alter table fetch_runs alter column entries_skipped drop default`);
  }
}
