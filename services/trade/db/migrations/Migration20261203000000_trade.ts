import { Migration } from "@mikro-orm/migrations";

/** The trade schema: instruments and aliases, observations, watchlists, alert rules and deliveries, documents and the items removed upstream. */
export class Migration20261203000000_trade extends Migration {
  override up(): void {
    this.addSql(`create table instruments (
      id text primary key,
      symbol text not null,
      name text not null,
      name_key text not null,
      kind text not null check (kind in ('equity', 'etf', 'fund', 'index', 'crypto', 'fx', 'other')),
      exchange text not null,
      cik text,
      currency text not null,
      status text not null check (status in ('active', 'inactive')),
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`);
    this.addSql(`alter table instruments add constraint instruments_symbol_key unique (symbol)`);
    this.addSql(`create index instruments_by_cik on instruments (cik)`);
    this.addSql(`create index instruments_by_name on instruments (name_key)`);
    this.addSql(`create table instrument_aliases (
      instrument_id text not null,
      kind text not null check (kind in ('ticker', 'cik', 'name')),
      normalized text not null,
      value text not null,
      created_at timestamptz not null,
      primary key (instrument_id, kind, normalized)
    )`);
    this.addSql(
      `create unique index instrument_aliases_one_owner on instrument_aliases (kind, normalized) where kind <> 'name'`,
    );
    this.addSql(`create index instrument_aliases_by_value on instrument_aliases (kind, normalized)`);
    this.addSql(`create table observations (
      id text primary key,
      instrument_id text not null,
      metric text not null,
      value_text text not null,
      value numeric not null,
      unit text not null,
      currency text not null,
      observed_at timestamptz not null,
      retrieved_at timestamptz not null,
      source_key text not null,
      source_ref text not null,
      recorded_at timestamptz not null
    )`);
    this.addSql(`alter table observations add constraint observations_one_per_ref unique (source_key, source_ref)`);
    this.addSql(
      `create index observations_by_series on observations (instrument_id, metric, unit, currency, observed_at)`,
    );
    this.addSql(`create table watchlists (
      id text primary key,
      owner text not null,
      name text not null,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`);
    this.addSql(`create index watchlists_by_owner on watchlists (owner, id)`);
    this.addSql(`create table watchlist_items (
      watchlist_id text not null,
      instrument_id text not null,
      added_at timestamptz not null,
      primary key (watchlist_id, instrument_id)
    )`);
    this.addSql(`create table alert_rules (
      id text primary key,
      owner text not null,
      instrument_id text not null,
      kind text not null check (kind in ('threshold', 'filing_type', 'new_document')),
      metric text not null,
      unit text not null,
      currency text not null,
      level_text text not null,
      level numeric,
      direction text not null check (direction in ('up', 'down', 'either')),
      filing_type text not null,
      created_at timestamptz not null
    )`);
    this.addSql(`create index alert_rules_by_owner on alert_rules (owner, id)`);
    this.addSql(`create index alert_rules_by_instrument on alert_rules (instrument_id, kind)`);
    this.addSql(`create table alert_deliveries (
      id text primary key,
      rule_id text not null,
      owner text not null,
      instrument_id text not null,
      kind text not null,
      trigger_id text not null,
      metric text not null,
      unit text not null,
      currency text not null,
      previous_value text not null,
      value text not null,
      level text not null,
      direction text not null,
      delivered_at timestamptz not null
    )`);
    this.addSql(`alter table alert_deliveries add constraint alert_deliveries_once unique (rule_id, trigger_id)`);
    this.addSql(`create index alert_deliveries_by_owner on alert_deliveries (owner, id)`);
    this.addSql(`create table documents (
      id text primary key,
      instrument_id text not null,
      item_id text not null,
      source_key text not null,
      canonical_url text not null,
      title text not null,
      filing_type text not null,
      published_at timestamptz,
      revision int not null,
      received_at timestamptz not null,
      removed_reason text,
      removed_at timestamptz
    )`);
    this.addSql(`alter table documents add constraint documents_one_per_item unique (instrument_id, item_id)`);
    this.addSql(`create index documents_by_instrument on documents (instrument_id, published_at)`);
    this.addSql(`create table removed_items (
      item_id text primary key,
      reason text not null,
      removed_at timestamptz not null
    )`);
  }
}
