import { Migration } from "@mikro-orm/migrations";
import { immutableTriggerSql } from "../../../kit/revisions/immutable.js";

/** The blog schema: blogs, members, posts, their immutable revisions and reviews, and schedules. */
export class Migration20261127000000_blog extends Migration {
  override up(): void {
    this.addSql(`create table blogs (
      id text primary key,
      handle text not null,
      created_for text not null,
      title text not null,
      description text not null,
      language text not null,
      theme text not null,
      feed_rss boolean not null,
      feed_atom boolean not null,
      feed_json boolean not null,
      feed_items int not null,
      feed_full_text boolean not null,
      revision bigint not null,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      constraint blogs_handle unique (handle),
      constraint blogs_one_per_subject unique (created_for)
    )`);
    this.addSql(`create table members (
      blog_id text not null,
      subject text not null,
      role text not null,
      added_at timestamptz not null,
      primary key (blog_id, subject),
      constraint members_role_check check (role in ('owner', 'editor', 'author'))
    )`);
    this.addSql(`create table posts (
      id text primary key,
      blog_id text not null,
      author_kind text not null,
      author text not null,
      workflow text,
      run_id text,
      stub_provider boolean not null,
      requested_by text,
      slug text not null,
      state text not null,
      visibility text not null,
      taxonomy jsonb not null,
      series text not null,
      attachments jsonb not null,
      listed boolean not null,
      current_revision int not null,
      published_revision int,
      version bigint not null,
      published_at timestamptz,
      deleted_at timestamptz,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      constraint posts_state_check check (state in ('draft', 'published', 'unpublished', 'deleted')),
      constraint posts_visibility_check check (visibility in ('public', 'members-only', 'private'))
    )`);
    this.addSql(`create index posts_by_blog on posts (blog_id, created_at, id)`);
    this.addSql(`create table post_revisions (
      post_id text not null,
      n int not null,
      title text not null,
      summary text not null,
      body text not null,
      author_kind text not null,
      author text not null,
      workflow text,
      run_id text,
      stub_provider boolean not null,
      requested_by text,
      review_required boolean not null,
      based_on int,
      created_at timestamptz not null,
      primary key (post_id, n),
      constraint post_revisions_n_check check (n >= 1)
    )`);
    this.addSql(`create table post_reviews (
      id text primary key,
      post_id text not null,
      revision int not null,
      reviewer text not null,
      verdict text not null,
      note text not null,
      at timestamptz not null,
      constraint post_reviews_verdict_check check (verdict in ('approve', 'reject'))
    )`);
    this.addSql(`create index post_reviews_by_revision on post_reviews (post_id, revision, at)`);
    for (const sql of [...immutableTriggerSql("post_revisions"), ...immutableTriggerSql("post_reviews")]) {
      this.addSql(sql);
    }
    this.addSql(`create table schedules (
      id text primary key,
      post_id text not null,
      action text not null,
      at timestamptz not null,
      revision int not null,
      state text not null,
      failure text not null,
      created_at timestamptz not null,
      done_at timestamptz,
      constraint schedules_once unique (post_id, action, at, revision),
      constraint schedules_action_check check (action in ('publish', 'unpublish')),
      constraint schedules_state_check check (state in ('pending', 'applied', 'failed', 'cancelled'))
    )`);
    this.addSql(`create index schedules_due on schedules (state, at)`);
  }
}
