import { Migration } from "@mikro-orm/migrations";

/** The reviews service's tables (analysis A.3). */
export class Migration20261127000000_reviews extends Migration {
  override up(): void {
    this.addSql(`create table entities (
      id text primary key,
      slug text not null,
      name text not null,
      name_key text not null,
      description text not null,
      state text not null,
      merged_into text,
      limitation text not null,
      verification text not null,
      notes_updated_by text not null,
      notes_updated_at timestamptz,
      summary_revisions int not null,
      version int not null,
      created_by text not null,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      constraint entities_state_check check (state in ('active', 'merged', 'deleted'))
    )`);
    this.addSql(`create index entities_by_name on entities (name_key)`);
    this.addSql(`create index entities_by_target on entities (merged_into)`);
    this.addSql(`create table aliases (
      id text primary key,
      entity_id text not null,
      kind text not null,
      value text not null,
      normalized text not null,
      created_by text not null,
      created_at timestamptz not null,
      constraint aliases_kind_check check (kind in ('name', 'url', 'gtin', 'sku', 'mpn', 'source', 'external_id'))
    )`);
    this.addSql(`create unique index aliases_one_owner on aliases (kind, normalized) where kind <> 'name'`);
    this.addSql(`create index aliases_by_value on aliases (kind, normalized)`);
    this.addSql(`create index aliases_by_entity on aliases (entity_id)`);
    this.addSql(`create table links (
      id text primary key,
      entity_id text not null,
      type text not null,
      target_entity text not null,
      target_service text not null,
      target_kind text not null,
      target_id text not null,
      created_by text not null,
      created_at timestamptz not null
    )`);
    this.addSql(`create index links_by_entity on links (entity_id)`);
    this.addSql(`create table exclusions (
      id text primary key,
      entity_id text not null,
      signal_id text not null,
      source_key text not null,
      reason text not null,
      created_by text not null,
      created_at timestamptz not null
    )`);
    this.addSql(`create index exclusions_by_entity on exclusions (entity_id)`);
    this.addSql(`create table signals (
      id text primary key,
      entity_id text not null,
      kind text not null,
      score int not null,
      scale int not null,
      text text not null,
      source_key text not null,
      source_ref text not null,
      url text not null,
      observed_at timestamptz,
      ingested_by text not null,
      item_id text not null,
      recorded_at timestamptz not null,
      constraint signals_one_per_ref unique (source_key, source_ref),
      constraint signals_kind_check check (kind in ('rating', 'mention'))
    )`);
    this.addSql(`create index signals_by_entity on signals (entity_id)`);
    this.addSql(`create table merges (
      id text primary key,
      entity_id text not null,
      into_id text not null,
      merged_by text not null,
      merged_at timestamptz not null,
      reason text not null,
      split_by text,
      split_at timestamptz,
      split_reason text
    )`);
    this.addSql(`create index merges_by_entity on merges (entity_id)`);
    this.addSql(`create table summary_revisions (
      entity_id text not null,
      revision int not null,
      state text not null,
      overview text not null,
      pros jsonb not null,
      cons jsonb not null,
      author_kind text not null,
      author text not null,
      workflow text,
      run_id text,
      stub_provider boolean not null,
      requested_by text,
      reviewed_by text,
      reviewed_at timestamptz,
      approved boolean,
      review_note text not null,
      flag text not null,
      created_at timestamptz not null,
      published_at timestamptz,
      primary key (entity_id, revision),
      constraint summary_revisions_state_check check (state in ('proposed', 'approved', 'rejected', 'published', 'unpublished')),
      constraint summary_revisions_author_kind_check check (author_kind in ('person', 'ai', 'system'))
    )`);
    this.addSql(`create table corrections (
      id text primary key,
      entity_id text not null,
      target_kind text not null,
      target_id text not null,
      text text not null,
      evidence_url text not null,
      submitted_by text not null,
      state text not null,
      editor_note text not null,
      triaged_by text not null,
      created_at timestamptz not null,
      triaged_at timestamptz,
      constraint corrections_state_check check (state in ('open', 'accepted', 'rejected', 'duplicate')),
      constraint corrections_target_kind_check check (target_kind in ('entity', 'alias', 'signal', 'summary', 'aggregate'))
    )`);
    this.addSql(`create index corrections_by_state on corrections (state, id)`);
    this.addSql(`create table queue_items (
      id text primary key,
      item_id text not null,
      source_key text not null,
      url text not null,
      title text not null,
      reason text not null,
      candidates jsonb not null,
      state text not null,
      entity_id text not null,
      signal_id text not null,
      decided_by text not null,
      created_at timestamptz not null,
      decided_at timestamptz,
      constraint queue_items_one_per_item unique (item_id),
      constraint queue_items_state_check check (state in ('pending', 'confirmed', 'ignored')),
      constraint queue_items_reason_check check (reason in ('conflict', 'name_only'))
    )`);
    this.addSql(`create index queue_items_by_state on queue_items (state, id)`);
    this.addSql(`create table history (
      id text primary key,
      entity_id text not null,
      action text not null,
      actor text not null,
      at timestamptz not null,
      detail text not null
    )`);
    this.addSql(`create index history_by_entity on history (entity_id, id)`);
  }
}
