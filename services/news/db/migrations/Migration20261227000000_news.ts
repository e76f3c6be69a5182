import { Migration } from "@mikro-orm/migrations";
import { immutableTriggerSql } from "../../../kit/revisions/immutable.js";

/** News: source items, clusters with their audit, stories with sources, timeline, perspectives and revisions. */
export class Migration20261227000000_news extends Migration {
  override up(): void {
    this.addSql(`create table source_items (
      id text primary key,
      source_key text not null,
      canonical_url text not null,
      title text not null,
      title_key text not null,
      published_at timestamptz,
      revision integer not null,
      change_order bigint not null,
      dedupe text not null check (dedupe in ('unique', 'duplicate')),
      duplicate_of text,
      removed_at timestamptz,
      removed_reason text,
      received_at timestamptz not null,
      updated_at timestamptz not null
    )`);
    this.addSql(`create index source_items_by_url on source_items (canonical_url)`);
    this.addSql(`create table clusters (
      id text primary key,
      state text not null check (state in ('active', 'merged', 'dissolved')),
      merged_into text,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`);
    this.addSql(`create index clusters_by_change on clusters (updated_at, id)`);
    this.addSql(`create table cluster_members (
      item_id text primary key,
      cluster_id text not null,
      method text not null,
      evidence text not null,
      score integer not null,
      by text,
      at timestamptz not null
    )`);
    this.addSql(`create index cluster_members_by_cluster on cluster_members (cluster_id, item_id)`);
    this.addSql(`create table cluster_audits (
      id text primary key,
      action text not null check (action in ('merge', 'split', 'reverse')),
      cluster_id text not null,
      moves jsonb not null,
      clusters jsonb not null,
      reason text not null,
      by text not null,
      at timestamptz not null,
      reverses text,
      reversed_by text
    )`);
    this.addSql(`create index cluster_audits_by_cluster on cluster_audits (cluster_id, id)`);
    this.addSql(`create table cluster_audit_items (
      audit_id text not null,
      item_id text not null,
      primary key (audit_id, item_id)
    )`);
    this.addSql(`create index cluster_audit_items_by_item on cluster_audit_items (item_id, audit_id)`);
    this.addSql(`create table stories (
      id text primary key,
      cluster_id text not null,
      state text not null check (state in ('draft', 'published', 'unpublished', 'retracted')),
      latest_revision integer not null,
      published_revision integer,
      next_source_number integer not null,
      version integer not null,
      created_by text not null,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      published_at timestamptz,
      retraction_note text,
      retracted_by text,
      retracted_at timestamptz
    )`);
    this.addSql(`create index stories_by_state on stories (state, id)`);
    this.addSql(`create table story_sources (
      story_id text not null,
      number integer not null,
      item_id text not null,
      perspective_id text,
      attached_by text,
      attached_at timestamptz not null,
      detached_by text,
      detached_at timestamptz,
      primary key (story_id, number)
    )`);
    this.addSql(
      `create unique index story_sources_one_live on story_sources (story_id, item_id) where detached_at is null`,
    );
    this.addSql(`create table story_perspectives (
      id text primary key,
      story_id text not null,
      label text not null,
      created_by text not null,
      created_at timestamptz not null,
      deleted_at timestamptz
    )`);
    this.addSql(`create index story_perspectives_by_story on story_perspectives (story_id, id)`);
    this.addSql(`create table story_timeline (
      id text primary key,
      story_id text not null,
      stated_date text not null,
      text text not null,
      source_number integer not null,
      created_by text not null,
      created_at timestamptz not null,
      deleted_at timestamptz
    )`);
    this.addSql(`create index story_timeline_by_story on story_timeline (story_id, id)`);
    this.addSql(`create table story_revisions (
      story_id text not null,
      n integer not null,
      headline jsonb not null,
      paragraphs jsonb not null,
      author_kind text not null check (author_kind in ('person', 'ai', 'system')),
      author text not null,
      workflow text,
      run_id text,
      stub_provider boolean not null,
      requested_by text,
      ai_assisted boolean not null,
      based_on integer not null,
      answers_flags jsonb not null,
      snapshot jsonb not null,
      ai_draft_id text,
      created_at timestamptz not null,
      primary key (story_id, n)
    )`);
    for (const sql of immutableTriggerSql("story_revisions")) this.addSql(sql);
    this.addSql(`create table story_approvals (
      story_id text not null,
      n integer not null,
      approver text not null,
      note text not null,
      at timestamptz not null,
      primary key (story_id, n)
    )`);
    for (const sql of immutableTriggerSql("story_approvals")) this.addSql(sql);
    this.addSql(`create table story_flags (
      id text primary key,
      story_id text not null,
      kind text not null,
      item_id text,
      source_number integer,
      note text not null,
      blocking boolean not null,
      created_by text,
      created_at timestamptz not null,
      resolved_revision integer,
      resolved_at timestamptz
    )`);
    this.addSql(`create index story_flags_by_story on story_flags (story_id, id)`);
    this.addSql(`create table story_notes (
      id text primary key,
      story_id text not null,
      revision integer not null,
      kind text not null check (kind in ('correction', 'update')),
      text text not null,
      created_by text not null,
      created_at timestamptz not null,
      published_at timestamptz
    )`);
    this.addSql(`create index story_notes_by_story on story_notes (story_id, id)`);
    this.addSql(`create table ai_drafts (
      id text primary key,
      story_id text not null,
      base_revision integer not null,
      instructions text not null,
      requested_by text not null,
      state text not null check (state in ('requested', 'fulfilled')),
      revision integer,
      created_at timestamptz not null
    )`);
    this.addSql(`create index ai_drafts_by_story on ai_drafts (story_id, id)`);
  }
}
