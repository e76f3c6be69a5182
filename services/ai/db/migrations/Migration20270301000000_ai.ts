import { Migration } from "@mikro-orm/migrations";

/** A definition version is never edited or removed: only its status (and who moved it, and when) changes. */
export const VERSION_IMMUTABLE =
  "if tg_op = 'DELETE' or (new.kind, new.key, new.version, new.body, new.note, new.created_by, new.created_at) " +
  "is distinct from (old.kind, old.key, old.version, old.body, old.note, old.created_by, old.created_at) then " +
  "raise exception 'definition versions are insert-only; only their status changes' using errcode = '23514'; " +
  "end if; return new;";

/**
 * The AI schema: providers (with their shared circuit breakers) and models; quotas (their counters are the kit's
 * quota_usage rows); runs, the request log and the answer cache; definitions as insert-only versions; the audit
 * log. Seeds the deterministic local provider, the default routing profile and the workflows other services name.
 */
export class Migration20270301000000_ai extends Migration {
  override up(): void {
    this.addSql(`create table providers (
      key text primary key,
      kind text not null,
      base_url text not null default '',
      api_key_env text not null default '',
      enabled boolean not null default true,
      timeout_ms int not null default 30000,
      max_retries int not null default 2,
      breaker_threshold int not null default 5,
      breaker_open_ms int not null default 30000,
      breaker_state text not null default 'closed',
      breaker_failures int not null default 0,
      breaker_opened_at timestamptz null,
      breaker_reopens_at timestamptz null,
      breaker_trial_until timestamptz null,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      constraint providers_kind_check check (kind in ('openai', 'anthropic', 'local')),
      constraint providers_breaker_check check (breaker_state in ('closed', 'open', 'half_open'))
    )`);
    this.addSql(`create table models (
      provider text not null,
      model text not null,
      operations jsonb not null,
      context_tokens int not null,
      max_output_tokens int not null,
      input_micros_per_1k bigint not null default '0',
      output_micros_per_1k bigint not null default '0',
      enabled boolean not null default true,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      primary key (provider, model)
    )`);
    this.addSql(`create table quotas (
      id text primary key,
      scope text not null,
      subject text not null,
      period text not null,
      max_requests int not null default 0,
      max_tokens int not null default 0,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      constraint quotas_scope_check check (scope in ('namespace', 'caller', 'model')),
      constraint quotas_period_check check (period in ('minute', 'hour', 'day'))
    )`);
    this.addSql(`create unique index quotas_unique on quotas (scope, subject, period)`);
    this.addSql(`create table runs (
      id text primary key,
      operation text not null,
      workflow text not null default '',
      workflow_version int not null default 0,
      namespace text not null,
      caller text not null,
      state text not null,
      request jsonb not null,
      provider text not null default '',
      model text not null default '',
      stub boolean not null default false,
      input_tokens int not null default 0,
      output_tokens int not null default 0,
      latency_ms int not null default 0,
      cache_lookup boolean not null default false,
      cache_hit boolean not null default false,
      output jsonb null,
      citations jsonb not null default '[]',
      failure_code text not null default '',
      failure_detail text not null default '',
      attempts int not null default 0,
      retry_of text null,
      retried_by text null,
      lease_until timestamptz null,
      created_at timestamptz not null,
      started_at timestamptz null,
      ended_at timestamptz null,
      constraint runs_state_check check (state in ('queued', 'running', 'succeeded', 'failed', 'canceled'))
    )`);
    this.addSql(`create index runs_by_caller on runs (caller, created_at)`);
    this.addSql(`create index runs_by_created_at on runs (created_at)`);
    this.addSql(`create index runs_active on runs (lease_until) where state in ('queued', 'running')`);
    this.addSql(`create unique index runs_retry_of_unique on runs (retry_of) where retry_of is not null`);
    this.addSql(`create table request_logs (
      id text primary key,
      run_id text not null,
      caller text not null,
      namespace text not null,
      operation text not null,
      provider text not null,
      model text not null,
      outcome text not null,
      http_status int not null default 0,
      input_tokens int not null default 0,
      output_tokens int not null default 0,
      latency_ms int not null default 0,
      error_code text not null default '',
      at timestamptz not null
    )`);
    this.addSql(`create index request_logs_by_at on request_logs (at)`);
    this.addSql(`create index request_logs_by_run on request_logs (run_id)`);
    this.addSql(`create table cache_entries (
      key text primary key,
      namespace text not null,
      operation text not null,
      provider text not null,
      model text not null,
      answer jsonb not null,
      bytes int not null,
      hits int not null default 0,
      created_at timestamptz not null,
      expires_at timestamptz not null
    )`);
    this.addSql(`create index cache_entries_by_expiry on cache_entries (expires_at)`);
    // When the whole cache was last purged: hits and misses count from then.
    this.addSql(`create table cache_state (
      id int primary key default 1,
      purged_at timestamptz not null,
      constraint cache_state_one check (id = 1)
    )`);
    this.addSql(`insert into cache_state (id, purged_at) values (1, '1970-01-01T00:00:00Z')`);
    this.addSql(`create table definitions (
      kind text not null,
      key text not null,
      status text not null default '',
      active_version int not null default 0,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      primary key (kind, key),
      constraint definitions_kind_check check (kind in ('prompt', 'workflow', 'route')),
      constraint definitions_status_check check (status in ('', 'active', 'disabled'))
    )`);
    this.addSql(`create table definition_versions (
      kind text not null,
      key text not null,
      version int not null,
      status text not null,
      body jsonb not null,
      note text not null default '',
      created_by text not null,
      created_at timestamptz not null,
      status_changed_by text not null default '',
      status_changed_at timestamptz null,
      primary key (kind, key, version),
      constraint definition_versions_status_check check (status in ('draft', 'active', 'deprecated', 'archived'))
    )`);
    // One active version per definition.
    this.addSql(`create unique index definition_versions_one_active on definition_versions (kind, key)
      where status = 'active'`);
    // A version is never edited, only its status moves: the database refuses anything else.
    this.addSql(`create function definition_versions_definition_versions_immutable_fn() returns trigger as $$
      begin ${VERSION_IMMUTABLE} end; $$ language plpgsql`);
    this.addSql(`create trigger definition_versions_immutable before update or delete on definition_versions
      for each row execute function definition_versions_definition_versions_immutable_fn()`);
    this.addSql(`create table audit_log (
      id text primary key,
      actor text not null,
      action text not null,
      target_kind text not null,
      target_key text not null,
      before jsonb null,
      after jsonb null,
      at timestamptz not null
    )`);
    this.addSql(`create index audit_log_by_at on audit_log (at)`);
    this.addSql(`create index audit_log_by_target on audit_log (target_kind, target_key, at)`);
    this.seed();
  }

  /** The local provider, its two models, the default route and the workflows the other services name. */
  private seed(): void {
    const at = "now()";
    this.addSql(`insert into providers (key, kind, created_at, updated_at) values ('local', 'local', ${at}, ${at})`);
    this
      .addSql(`insert into models (provider, model, operations, context_tokens, max_output_tokens, created_at, updated_at)
      values ('local', 'extractive', '["chat","generate","summarize","classify","extract","enrich"]', 32768, 4096, ${at}, ${at}),
             ('local', 'hash-embed', '["embed"]', 8192, 1, ${at}, ${at})`);
    const version = (kind: string, key: string, body: unknown) => {
      this.addSql(`insert into definitions (kind, key, status, active_version, created_at, updated_at)
        values ('${kind}', '${key}', '${kind === "route" ? "active" : ""}', 1, ${at}, ${at})`);
      this.addSql(`insert into definition_versions (kind, key, version, status, body, note, created_by, created_at)
        values ('${kind}', '${key}', 1, 'active', '${JSON.stringify(body).replace(/'/g, "''")}', 'seeded', 'svc:ai', ${at})`);
    };
    // Every caller alike: 120 provider calls a minute and two million tokens a day, until an operator says otherwise.
    this.addSql(`insert into quotas (id, scope, subject, period, max_requests, max_tokens, created_at, updated_at)
      values ('q_caller_minute', 'caller', '*', 'minute', 120, 0, ${at}, ${at}),
             ('q_caller_day', 'caller', '*', 'day', 0, 2000000, ${at}, ${at})`);
    version("route", "default", { targets: ["local/extractive"], operations: { embed: ["local/hash-embed"] } });
    const workflows: [string, string, string][] = [
      [
        "trade.summarize_market_context",
        "summarize",
        "Summarize the market context of {{symbol}} from the sources given. Describe what happened; never advise a trade.",
      ],
      ["reviews.summarize_entity", "summarize", "Summarize what the reviews of {{entity}} say, citing them."],
      ["news.draft_story", "summarize", "Draft a news story about {{topic}} from the sources given, citing them."],
      ["blog.draft_post", "generate", "Draft a blog post about {{topic}}."],
      ["community.derive_paste", "generate", "Derive a paste from: {{text}}"],
      ["community.comment", "generate", "Write a comment on: {{text}}"],
    ];
    for (const [key, operation, template] of workflows) {
      version("prompt", key, { template });
      version("workflow", key, { operation, prompt: key, route: "default" });
    }
  }
}
