import { Migration } from "@mikro-orm/migrations";
import type { MigrationObject } from "@mikro-orm/core";

/** The kit's rate-limit counters (`writes/rate-limit.ts`): one row per rule, key and fixed window. */
class KitRateLimits extends Migration {
  override up(): void {
    // No index on ends_at: every hit would pay for it, and the hourly prune can scan.
    this.addSql(`create table rate_limits (
      name text not null,
      key text not null,
      window_start timestamptz not null,
      ends_at timestamptz not null,
      hits integer not null,
      primary key (name, key, window_start)
    )`);
  }
}

export const kitRateLimitsMigration: MigrationObject = {
  name: "Migration00000000000001_kit_rate_limits",
  class: KitRateLimits,
};
