import { Migration } from "@mikro-orm/migrations";
import type { MigrationObject } from "@mikro-orm/core";

/**
 * Slugs per scope (`slugs/slugs.ts`): each object's current slug and the old
 * ones it had, which redirect to it. An old slug names the object, not the
 * slug after it, so chains collapse by construction.
 */
class KitSlugs extends Migration {
  override up(): void {
    this.addSql(`create table slugs (
      scope text not null,
      slug text not null,
      object_id text not null,
      current boolean not null,
      changed_at timestamptz not null,
      primary key (scope, slug)
    )`);
    this.addSql(`create unique index slugs_current on slugs (scope, object_id) where current`);
    this.addSql(`create index slugs_object on slugs (scope, object_id)`);
  }
}

export const kitSlugsMigration: MigrationObject = { name: "Migration00000000000005_kit_slugs", class: KitSlugs };
