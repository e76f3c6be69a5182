import { Migration } from "@mikro-orm/migrations";

/** The community schema: pastes with likes and copies, comment threads, comments and votes, pulse, moderation, relays. */
export class Migration20261127000000_community extends Migration {
  override up(): void {
    const author = `author_kind text not null, author text not null, workflow text, run_id text,
      stub_provider boolean not null, requested_by text`;
    this.addSql(`create table pastes (
      id text primary key, slug text not null, title text not null, kind text not null, body text not null,
      screenshot text, language text not null, ${author}, owner text, forked_from text, state text not null,
      censor_reason text, likes integer not null, copies integer not null, forks integer not null,
      revision integer not null, created_at timestamptz not null, updated_at timestamptz not null)`);
    this.addSql(`create index pastes_by_owner on pastes (owner, created_at, id)`);
    this.addSql(`create table paste_likes (
      paste_id text not null, person text not null, created_at timestamptz not null, primary key (paste_id, person))`);
    this.addSql(`create table paste_copies (
      paste_id text not null, person text not null, created_at timestamptz not null, primary key (paste_id, person))`);
    this.addSql(`create table threads (
      id text primary key, ref_service text not null, ref_kind text not null, ref_id text not null,
      visibility text not null, comments integer not null, created_at timestamptz not null,
      constraint threads_one_per_ref unique (ref_service, ref_kind, ref_id))`);
    this.addSql(`create table comments (
      id text primary key, thread_id text not null, ${author}, body text not null, score integer not null,
      created_at timestamptz not null, deleted_at timestamptz, deleted_by text)`);
    this.addSql(`create index comments_by_thread on comments (thread_id, created_at, id)`);
    this.addSql(`create table comment_votes (
      comment_id text not null, voter text not null, value smallint not null, created_at timestamptz not null,
      primary key (comment_id, voter))`);
    this.addSql(`create table pulse_items (
      id text primary key, ref_service text not null, ref_kind text not null, ref_id text not null,
      title text not null, url text not null, origin text not null, actor text, occurred_at timestamptz not null,
      recorded_at timestamptz not null, updated_at timestamptz not null, retracted_at timestamptz,
      constraint pulse_items_one_per_ref unique (ref_service, ref_kind, ref_id))`);
    this.addSql(`create index pulse_items_newest on pulse_items (occurred_at, id)`);
    this.addSql(`create table moderation_records (
      id text primary key, action text not null, target_service text not null, target_kind text not null,
      target_id text not null, actor text not null, person text, relayed_by text not null, reason text not null,
      value text not null, body text not null, status text not null, failure text not null, request_key text,
      created_at timestamptz not null, settled_at timestamptz,
      constraint moderation_records_request_key unique (request_key))`);
    this.addSql(`create index moderation_records_newest on moderation_records (created_at, id)`);
    this.addSql(`create table relays (
      id text primary key, platform text not null, webhook_sealed text not null, webhook_last4 text not null,
      scope text not null, enabled boolean not null, updated_at timestamptz not null)`);
  }
}
