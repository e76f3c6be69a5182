import { Migration } from "@mikro-orm/migrations";

/** The forum schema: spaces, threads, posts, votes and the moderation audit. */
export class Migration20261220000000_space extends Migration {
  override up(): void {
    this.addSql(`create table spaces (
      key text primary key,
      title text not null,
      description text not null,
      visibility text not null,
      members_only boolean not null,
      vip_creator text not null,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      constraint spaces_visibility_check check (visibility in ('public', 'members', 'staff'))
    )`);
    this.addSql(`create table threads (
      id text primary key,
      space text not null,
      slug text not null,
      title text not null,
      author_kind text not null,
      author text not null,
      pinned boolean not null,
      locked boolean not null,
      deleted_at timestamptz null,
      score int not null,
      hot double precision not null,
      reply_count int not null,
      created_at timestamptz not null,
      last_activity_at timestamptz not null,
      constraint threads_author_kind_check check (author_kind in ('person', 'ai'))
    )`);
    this.addSql(`create unique index threads_slug on threads (space, slug)`);
    this.addSql(`create index threads_new on threads (space, pinned, created_at, id) where deleted_at is null`);
    this.addSql(`create index threads_hot on threads (space, pinned, hot, id) where deleted_at is null`);
    this.addSql(`create index threads_top on threads (space, pinned, score, created_at, id) where deleted_at is null`);
    this.addSql(`create table posts (
      id text primary key,
      thread_id text not null,
      first boolean not null,
      author_kind text not null,
      author text not null,
      body text not null,
      revision int not null,
      created_at timestamptz not null,
      edited_at timestamptz null,
      deleted_at timestamptz null,
      constraint posts_author_kind_check check (author_kind in ('person', 'ai'))
    )`);
    this.addSql(`create index posts_by_thread on posts (thread_id, created_at, id)`);
    this.addSql(`create table votes (
      thread_id text not null,
      person text not null,
      value smallint not null,
      voted_at timestamptz not null,
      primary key (thread_id, person),
      constraint votes_value_check check (abs(value) = 1)
    )`);
    this.addSql(`create table moderation_audit (
      id text primary key,
      action text not null,
      thread_id text not null,
      post_id text not null,
      actor text not null,
      relayed_by text not null,
      reason text not null,
      created_at timestamptz not null
    )`);
  }
}
