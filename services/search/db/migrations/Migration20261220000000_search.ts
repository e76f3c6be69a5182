import { Migration } from "@mikro-orm/migrations";

/**
 * The search schema: documents as their owners wrote them (tombstones kept),
 * their weighted text vector, and the writes refused. pg_trgm and unaccent
 * live in `public` (one per database; trusted extensions, so a database owner
 * may create them), and are named with it.
 */
export class Migration20261220000000_search extends Migration {
  override up(): void {
    this.addSql(`create extension if not exists pg_trgm with schema public`);
    this.addSql(`create extension if not exists unaccent with schema public`);
    this.addSql(`create table documents (
      owner text not null,
      type text not null,
      id text not null,
      revision bigint not null,
      deleted boolean not null default false,
      title text not null default '',
      title_folded text not null default '',
      body text not null default '',
      url text not null default '',
      lang text not null default '',
      access text[] not null default '{}',
      public boolean not null default false,
      published boolean not null default false,
      facets jsonb not null default '{}',
      facet_pairs text[] not null default '{}',
      published_at timestamptz not null,
      indexed_at timestamptz not null,
      tsv tsvector not null default ''::tsvector,
      constraint documents_pkey primary key (owner, type, id),
      constraint documents_revision_check check (revision >= 1)
    )`);
    // Only what a query can return is indexed for queries: published, live documents.
    this.addSql(`create index documents_words on documents using gin (tsv) where published and not deleted`);
    this.addSql(
      `create index documents_facet_pairs on documents using gin (facet_pairs) where published and not deleted`,
    );
    this.addSql(
      `create index documents_titles on documents using gin (title_folded public.gin_trgm_ops) where published and not deleted`,
    );
    this.addSql(
      `create index documents_recent on documents (published_at desc, owner, type, id) where published and not deleted`,
    );
    this.addSql(`create table rejections (
      rejection_id text primary key,
      owner text not null,
      type text not null,
      id text not null,
      revision bigint not null,
      deletion boolean not null,
      code text not null,
      detail text not null,
      rejected_at timestamptz not null
    )`);
    this.addSql(`create index rejections_by_owner on rejections (owner, rejection_id)`);
  }
}
