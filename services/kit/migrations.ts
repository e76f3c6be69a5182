import type { ServiceSchema } from "./db/orm.js";
import { kitEditorsMigration } from "./db/kit-editors-migration.js";
import { kitMigration } from "./db/kit-migration.js";
import { kitOutboxTraceparentMigration } from "./db/kit-outbox-traceparent-migration.js";
import { kitRateLimitsMigration } from "./db/kit-rate-limits-migration.js";
import { kitEffectRefusalsMigration } from "./effects/migration.js";
import { kitQuotasMigration } from "./quotas/migration.js";
import { kitSearchDocumentsMigration } from "./search-documents/migration.js";
import { kitSlugsMigration } from "./slugs/migration.js";

/**
 * The kit's own tables, migrated in every service's schema before the service's own migrations, in this order.
 * Above every kit folder (each folder owns its table's migration), so `db/` never imports the folders that use it.
 */
export const KIT_MIGRATIONS = [
  kitMigration,
  kitRateLimitsMigration,
  kitOutboxTraceparentMigration,
  kitEditorsMigration,
  kitSearchDocumentsMigration,
  kitSlugsMigration,
  kitEffectRefusalsMigration,
  kitQuotasMigration,
];

/** A module's schema as its database is opened: the kit's tables first, then the service's committed migrations. */
export function schemaOf(module: { key: string; schema: Omit<ServiceSchema, "key"> }): ServiceSchema {
  return { key: module.key, ...module.schema, migrations: [...KIT_MIGRATIONS, ...module.schema.migrations] };
}
