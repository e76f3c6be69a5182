import { Migration } from "@mikro-orm/migrations";

/** Market context: the workflow's stored inputs and the context revisions. */
export class Migration20261203000100_trade_context extends Migration {
  override up(): void {
    this.addSql(`create table context_inputs (
      id text primary key,
      instrument_id text not null,
      fingerprint text not null,
      created_at timestamptz not null
    )`);
    this.addSql(
      `alter table context_inputs add constraint context_inputs_one_per_sources unique (instrument_id, fingerprint)`,
    );
    this.addSql(`create table context_input_sources (
      input_id text not null,
      number integer not null,
      kind text not null check (kind in ('document', 'observation')),
      ref text not null,
      revision integer not null,
      title text not null,
      url text not null,
      source_key text not null,
      at timestamptz,
      filing_type text not null,
      metric text not null,
      value text not null,
      unit text not null,
      currency text not null,
      primary key (input_id, number)
    )`);
    this.addSql(`create table context_revisions (
      id text primary key,
      instrument_id text not null,
      revision integer not null,
      text text not null,
      citations jsonb not null,
      input_id text not null,
      status text not null check (status in ('draft', 'approved', 'rejected', 'published', 'superseded')),
      author_kind text not null check (author_kind in ('person', 'ai', 'system')),
      author text not null,
      workflow text,
      run_id text,
      stub_provider boolean not null,
      requested_by text,
      decided_by text,
      decided_at timestamptz,
      decision_note text not null,
      published_by text,
      published_at timestamptz,
      created_at timestamptz not null
    )`);
    this.addSql(
      `alter table context_revisions add constraint context_revisions_number unique (instrument_id, revision)`,
    );
    this.addSql(
      `create unique index context_revisions_one_published on context_revisions (instrument_id) where status = 'published'`,
    );
  }
}
