import { Migration } from "@mikro-orm/migrations";

/** The deals schema: offers, observations, votes, flags, the audit, reviews, products and aliases, watches and their matches. */
export class Migration20261123000000_deals extends Migration {
  override up(): void {
    this.addSql(`create table offers (
      id text primary key,
      link text not null,
      link_key text not null,
      title text not null,
      description text not null,
      category text not null,
      product_id text,
      expires_at timestamptz,
      submitted_by text not null,
      ai_assisted boolean not null,
      noindex boolean not null,
      reviewed_by text,
      reviewed_at timestamptz,
      expired_at timestamptz,
      expired_by text,
      disabled_at timestamptz,
      merged_into text,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`);
    this.addSql(`alter table offers add constraint offers_one_per_link unique (link_key)`);
    this.addSql(`create index offers_by_canonical on offers (merged_into)`);
    this.addSql(
      `create index offers_stated_end on offers (expires_at) where expired_at is null and expires_at is not null`,
    );
    this.addSql(`create table observations (
      id text primary key,
      offer_id text not null,
      observed_by text not null,
      price_minor bigint,
      price_currency text,
      shipping_minor bigint,
      shipping_currency text,
      condition text check (condition in ('new', 'used', 'refurbished')),
      availability text check (availability in ('in_stock', 'out_of_stock', 'preorder', 'limited')),
      observed_at timestamptz not null,
      recorded_at timestamptz not null,
      constraint observations_price_check check ((price_minor is null) = (price_currency is null) and price_minor >= 0),
      constraint observations_shipping_check check ((shipping_minor is null) = (shipping_currency is null) and shipping_minor >= 0)
    )`);
    this.addSql(`create index observations_by_offer on observations (offer_id, id)`);
    this.addSql(`create table votes (
      id text primary key,
      offer_id text not null,
      voter text not null,
      value smallint not null check (abs(value) = 1),
      weight double precision not null,
      ip_hash text not null,
      created_at timestamptz not null,
      removed_at timestamptz
    )`);
    this.addSql(`create unique index votes_one_present on votes (offer_id, voter) where removed_at is null`);
    this.addSql(`create index votes_by_voter on votes (voter, created_at)`);
    this.addSql(`create table flags (
      id text primary key,
      offer_id text not null,
      reporter text not null,
      reason text not null check (reason in ('expired', 'price_wrong', 'duplicate', 'spam', 'other', 'vote_ring')),
      note text not null,
      created_at timestamptz not null,
      resolved_at timestamptz,
      resolved_by text,
      outcome text check (outcome in ('dismissed', 'actioned')),
      resolution text
    )`);
    this.addSql(`create unique index flags_one_open on flags (offer_id, reporter) where resolved_at is null`);
    this.addSql(`create index flags_by_offer on flags (offer_id, id)`);
    this.addSql(`create table audit (
      id text primary key,
      action text not null,
      offer_id text not null,
      flag_id text,
      actor text not null,
      reason text not null,
      details jsonb not null,
      created_at timestamptz not null
    )`);
    this.addSql(`create index audit_by_offer on audit (offer_id, id)`);
    this.addSql(`create table reviews (
      id text primary key,
      offer_id text not null,
      reviewer text not null check (reviewer ~ '^usr_'),
      note text not null,
      created_at timestamptz not null
    )`);
    this.addSql(`create index reviews_by_offer on reviews (offer_id)`);
    this.addSql(`create table products (
      id text primary key,
      name text not null,
      created_at timestamptz not null
    )`);
    this.addSql(`create table product_aliases (
      kind text not null check (kind in ('gtin', 'mpn', 'sku', 'url', 'name')),
      value text not null,
      product_id text not null,
      created_at timestamptz not null,
      primary key (kind, value)
    )`);
    this.addSql(`create index product_aliases_by_product on product_aliases (product_id)`);
    this.addSql(`create table watches (
      id text primary key,
      owner text not null,
      kind text not null check (kind in ('keyword', 'product', 'price_below', 'saved_search')),
      keyword text not null,
      keyword_words text[] not null default '{}',
      product_id text,
      price_below_minor bigint,
      price_below_currency text,
      query text not null,
      created_at timestamptz not null
    )`);
    this.addSql(`create index watches_by_owner on watches (owner, id)`);
    this.addSql(`create index watches_by_product on watches (product_id)`);
    // An observation finds the keyword watches it may match by their words, not by reading every watch.
    this.addSql(`create index watches_by_keyword_words on watches using gin (keyword_words)`);
    this.addSql(`create table watch_matches (
      watch_id text not null,
      observation_id text not null,
      offer_id text not null,
      matched_at timestamptz not null,
      primary key (watch_id, observation_id)
    )`);
  }
}
