import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import { QuotaSchema, type Quota as QuotaMessage } from "../../../gen/pf/ai/v1/usage_pb.js";
import { sql } from "../../kit/db/sql.js";
import { newId } from "../../kit/handler/ids.js";
import { problem } from "../../kit/handler/problem.js";
import { reserve, spend, type Quota, type Reservation } from "../../kit/quotas/quotas.js";
import type { AiContext } from "../context.js";
import {
  applies,
  counterName,
  EVERY_SUBJECT,
  keyIn,
  WINDOW_MS,
  windowAt,
  type QuotaDimension,
  type QuotaRule,
  type QuotaScope,
  type QuotaSubjects,
  type QuotaWindow,
} from "../domain/quota-scopes.js";

export type { QuotaSubjects } from "../domain/quota-scopes.js";

/** A reservation untouched this long (its process was lost mid-call) is given back by the sweep: far above any call. */
const EXPIRE_AFTER_MS = 3_600_000;

/** A call's reservations on every quota that applies: settled after the call, released when none was made. */
export interface CallReservation {
  /** The call happened (succeeded or failed): one request, and the tokens it used instead of the estimate. */
  settle(actualTokens: number): Promise<void>;
  /** No call was made after all: everything returns. */
  release(): Promise<void>;
}

/**
 * Reserves one request and `estimatedTokens` on every quota that applies to the call, all in one transaction: when
 * any does not fit, 429 ai.quota_exceeded (its scope, subject, window and retry_after_seconds) and nothing is
 * counted anywhere. Counters are locked in one order (by name, then key), so concurrent calls never deadlock and
 * never pass a limit together.
 */
export async function reserveCall(
  ctx: AiContext,
  subjects: QuotaSubjects,
  estimatedTokens: number,
): Promise<CallReservation> {
  // A call costs at least a token: a spent token quota refuses even a call estimated at none.
  const tokens = Math.max(1, Math.ceil(estimatedTokens));
  const held = await ctx.transaction(async (em) => {
    const taken: Held[] = [];
    for (const counter of countersOf(await rulesFor(em, subjects), subjects, ["requests", "tokens"])) {
      const units = counter.dimension === "requests" ? 1 : tokens;
      taken.push({ ...counter, reservation: await reserve(ctx, counter.quota, counter.key, units, { em }) });
    }
    return taken;
  });
  return new HeldCall(ctx, held);
}

/** A cache hit: one request (no tokens) on every quota that applies, in one transaction; 429 as reserveCall. */
export async function countCacheHit(ctx: AiContext, subjects: QuotaSubjects): Promise<void> {
  await ctx.transaction(async (em) => {
    for (const counter of countersOf(await rulesFor(em, subjects), subjects, ["requests"]))
      await spend(ctx, counter.quota, counter.key, 1, em);
  });
}

/** Every AI quota's counters as the kit's quotas, for the sweep that expires lost reservations. */
export async function everyCounter(em: EntityManager): Promise<Quota[]> {
  const rules = (await sql<QuotaColumns>(em, `select * from {quotas}`)).map(ruleOf);
  return rules.flatMap((rule) => [kitQuota(rule, "requests"), kitQuota(rule, "tokens")]);
}

/** What a quota is set to: its scope, subject and window, and its limits (0: unlimited). */
export type QuotaSetting = Omit<QuotaRule, "id">;

/**
 * Sets a quota: a new one, or new limits for the one of the same scope, subject and window (its id and counts kept).
 * Answers the rule before (undefined when new) and after, in the caller's transaction.
 */
export async function setQuota(
  em: EntityManager,
  setting: QuotaSetting,
  at: Date,
): Promise<{ before?: QuotaRow; after: QuotaRow }> {
  const [old] = await sql<QuotaColumns>(
    em,
    `select * from {quotas} where scope = ? and subject = ? and period = ? for update`,
    [setting.scope, setting.subject, setting.window],
  );
  const [row] = await sql<QuotaColumns>(
    em,
    `insert into {quotas} (id, scope, subject, period, max_requests, max_tokens, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?, ?, ?)
     on conflict (scope, subject, period) do update
       set max_requests = excluded.max_requests, max_tokens = excluded.max_tokens, updated_at = excluded.updated_at
     returning *`,
    [newId("q"), setting.scope, setting.subject, setting.window, setting.maxRequests, setting.maxTokens, at, at],
  );
  return { before: old && quotaRowOf(old), after: quotaRowOf(row) };
}

/** A quota as stored: its rule and when it was last set. */
export interface QuotaRow extends QuotaRule {
  updatedAt: Date;
}

/** Only the quotas counting this namespace or this caller (`*` ones included, their use counted for that key), or one. */
export interface QuotaFilter {
  namespace?: string;
  caller?: string;
  id?: string;
}

/**
 * The quotas (filtered), each with its window at `at` and what was used in it: for a named subject its own counts,
 * for `*` the total over every key (or, filtered, the filtered key's). Reserved units of calls under way count.
 */
export async function quotasWithUse(em: EntityManager, filter: QuotaFilter, at: Date): Promise<QuotaMessage[]> {
  const scopes = (["namespace", "caller"] as const).filter((scope) => filter[scope]);
  const where = [...scopes.map(() => `(scope = ? and subject in (?, ?))`), ...(filter.id ? ["id = ?"] : [])].join(
    " or ",
  );
  const rows = await sql<QuotaColumns>(
    em,
    `select * from {quotas} ${where ? `where ${where}` : ""} order by scope, subject, period`,
    [...scopes.flatMap((scope) => [scope, filter[scope], EVERY_SUBJECT]), ...(filter.id ? [filter.id] : [])],
  );
  const quotas: QuotaMessage[] = [];
  for (const row of rows.map(quotaRowOf)) {
    const window = windowAt(row.window, at);
    const key = row.subject !== EVERY_SUBJECT ? row.subject : row.scope === "model" ? undefined : filter[row.scope];
    const used = await sql<{ name: string; used: string }>(
      em,
      `select name, coalesce(sum(used), 0) as used from {quota_usage}
       where name in (?, ?) and window_start = ? ${key ? "and key = ?" : ""} group by name`,
      [counterName(row.id, "requests"), counterName(row.id, "tokens"), window.start, ...(key ? [key] : [])],
    );
    const usedOf = (dimension: QuotaDimension) =>
      Number(used.find((found) => found.name === counterName(row.id, dimension))?.used ?? 0);
    const { id, scope, subject, maxRequests, maxTokens } = row;
    quotas.push(
      create(QuotaSchema, {
        id,
        scope,
        subject,
        window: row.window,
        maxRequests,
        maxTokens,
        windowStart: timestampFromDate(window.start),
        windowEnd: timestampFromDate(window.end),
        usedRequests: usedOf("requests"),
        usedTokens: usedOf("tokens"),
        updatedAt: timestampFromDate(row.updatedAt),
      }),
    );
  }
  return quotas;
}

/** One kit counter a call takes from: a dimension of a quota, for the call's key in its scope. */
interface Counter {
  quota: Quota;
  key: string;
  dimension: QuotaDimension;
}

interface Held extends Counter {
  reservation: Reservation;
}

/** The reservations of one call, settled or released once, all together in one transaction. */
class HeldCall implements CallReservation {
  private done = false;

  constructor(
    private readonly ctx: AiContext,
    private readonly held: Held[],
  ) {}

  async settle(actualTokens: number): Promise<void> {
    const tokens = Math.max(0, Math.ceil(actualTokens));
    await this.end((held, em) => held.reservation.settle(held.dimension === "requests" ? 1 : tokens, em));
  }

  async release(): Promise<void> {
    await this.end((held, em) => held.reservation.release(em));
  }

  private async end(each: (held: Held, em: EntityManager) => Promise<void>): Promise<void> {
    if (this.done || this.held.length === 0) return;
    this.done = true;
    await this.ctx.transaction(async (em) => {
      for (const held of this.held) await each(held, em);
    });
  }
}

/** The counters of the rules that apply, with a limit in the dimensions asked, in their locking order. */
function countersOf(rules: QuotaRule[], subjects: QuotaSubjects, dimensions: QuotaDimension[]): Counter[] {
  const counters = rules
    .filter((rule) => applies(rule, subjects))
    .flatMap((rule) =>
      dimensions
        .filter((dimension) => limitOf(rule, dimension) > 0)
        .map((dimension) => ({ quota: kitQuota(rule, dimension), key: keyIn(rule.scope, subjects), dimension })),
    );
  const order = (counter: Counter) => `${counter.quota.name}\u0000${counter.key}`;
  return counters.sort((a, b) => (order(a) < order(b) ? -1 : order(a) > order(b) ? 1 : 0));
}

/** A dimension of a rule as the kit's quota: its fixed window, and a refusal in the service's words. */
function kitQuota(rule: QuotaRule, dimension: QuotaDimension): Quota {
  const limit = limitOf(rule, dimension);
  return {
    name: counterName(rule.id, dimension),
    limit,
    windowMs: WINDOW_MS[rule.window],
    expireAfterMs: EXPIRE_AFTER_MS,
    refused: (key, retryAfterSeconds = 1) =>
      problem(
        429,
        "ai.quota_exceeded",
        `The ${rule.scope} quota of ${limit} ${dimension} a ${rule.window} for ${key} is spent; ` +
          `try again in ${retryAfterSeconds} seconds.`,
        {
          quota: rule.id,
          scope: rule.scope,
          subject: key,
          window: rule.window,
          dimension,
          limit,
          retry_after_seconds: retryAfterSeconds,
        },
      ),
  };
}

const limitOf = (rule: QuotaRule, dimension: QuotaDimension) =>
  dimension === "requests" ? rule.maxRequests : rule.maxTokens;

/** The quotas that may apply to a call: its keys' own, and every `*` one. */
async function rulesFor(em: EntityManager, subjects: QuotaSubjects): Promise<QuotaRule[]> {
  const rows = await sql<QuotaColumns>(
    em,
    `select * from {quotas} where (max_requests > 0 or max_tokens > 0) and (subject = ?
       or (scope = 'namespace' and subject = ?) or (scope = 'caller' and subject = ?) or (scope = 'model' and subject = ?))`,
    [EVERY_SUBJECT, subjects.namespace, subjects.caller, subjects.model],
  );
  return rows.map(ruleOf);
}

interface QuotaColumns {
  id: string;
  scope: QuotaScope;
  subject: string;
  period: QuotaWindow;
  max_requests: number;
  max_tokens: number;
  updated_at: Date | string;
}

function ruleOf(row: QuotaColumns): QuotaRule {
  return {
    id: row.id,
    scope: row.scope,
    subject: row.subject,
    window: row.period,
    maxRequests: Number(row.max_requests),
    maxTokens: Number(row.max_tokens),
  };
}

const quotaRowOf = (row: QuotaColumns): QuotaRow => ({ ...ruleOf(row), updatedAt: new Date(row.updated_at) });
