import { Migration } from "@mikro-orm/migrations";
import type { MigrationObject } from "@mikro-orm/core";

/**
 * The service's search documents (`search-documents/`): the desired state of each document it owns in search (or
 * its tombstone) at a revision that grows with every change, and how far the relay has pushed it.
 */
class KitSearchDocuments extends Migration {
  override up(): void {
    this.addSql(`create table search_documents (
      type text collate "C" not null,
      id text collate "C" not null,
      revision bigint not null,
      deleted boolean not null,
      document jsonb,
      changed_at timestamptz not null default now(),
      pushed_revision bigint not null default 0,
      rejected boolean not null default false,
      attempts integer not null default 0,
      last_error text,
      reconciled_at timestamptz,
      primary key (type, id),
      constraint search_documents_tombstone_check check (deleted = (document is null))
    )`);
    this.addSql(
      `create index search_documents_pending on search_documents (changed_at) where pushed_revision < revision`,
    );
  }
}

export const kitSearchDocumentsMigration: MigrationObject = {
  name: "Migration00000000000004_kit_search_documents",
  class: KitSearchDocuments,
};
