import type { EntityManager } from "@mikro-orm/postgresql";
import { sql } from "../../kit/db/sql.js";
import type { AiContext } from "../context.js";
import { admit, afterOutcome, closed, sameBreaker, type Admission, type Breaker } from "../domain/breaker.js";
import { aiSubjects, recordAdminEvent } from "../events.js";

interface BreakerColumns {
  breaker_state: Breaker["state"];
  breaker_failures: number;
  breaker_threshold: number;
  breaker_open_ms: number;
  breaker_opened_at: Date | string | null;
  breaker_reopens_at: Date | string | null;
  breaker_trial_until: Date | string | null;
  timeout_ms: number;
}

const COLUMNS = `breaker_state, breaker_failures, breaker_threshold, breaker_open_ms, breaker_opened_at,
  breaker_reopens_at, breaker_trial_until, timeout_ms`;

/** A trial whose place was taken by another caller between the read and the write is looked at again, this often. */
const ATTEMPTS = 3;

/**
 * Whether a call to `provider` may go now (domain/breaker.ts): a plain read while it is closed or its trial is
 * held; taking the trial is one compare-and-set statement on the state just read, so across instances exactly one
 * caller takes it and everyone else is refused. No lock is held, least of all across the call. An unknown provider
 * is refused.
 */
export async function admitCall(ctx: AiContext, provider: string): Promise<Admission> {
  const em = ctx.orm.em.fork();
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const [row] = await sql<BreakerColumns>(em, `select ${COLUMNS} from {providers} where key = ?`, [provider]);
    if (!row) return "refused";
    const breaker = breakerOf(row);
    const { admission, next } = admit(breaker, ctx.clock.now(), row.timeout_ms);
    if (!next) return admission;
    const taken = await sql(
      em,
      `update {providers} set breaker_state = ?, breaker_trial_until = ?
       where key = ? and breaker_state = ? and breaker_reopens_at is not distinct from ?
         and breaker_trial_until is not distinct from ?
       returning key`,
      [next.state, next.trialUntil, provider, breaker.state, breaker.reopensAt, breaker.trialUntil],
    );
    if (taken.length === 1) return admission;
  }
  return "refused";
}

/**
 * Counts a call's outcome on the provider's breaker in one short transaction (its row locked only for it): a
 * success closes it; a failure counts and opens it at the threshold or after a failed trial, recording
 * `ai.provider.breaker_opened` in that same transaction.
 */
export async function recordCallOutcome(
  ctx: AiContext,
  provider: string,
  outcome: "success" | "failure",
): Promise<void> {
  // The common case, a success on a closed breaker with no failures counted, changes nothing: no lock, no write.
  if (outcome === "success") {
    const [row] = await sql<BreakerColumns>(ctx.orm.em.fork(), `select ${COLUMNS} from {providers} where key = ?`, [
      provider,
    ]);
    if (!row || (row.breaker_state === "closed" && Number(row.breaker_failures) === 0)) return;
  }
  await ctx.transaction(async (em) => {
    const [row] = await sql<BreakerColumns>(em, `select ${COLUMNS} from {providers} where key = ? for update`, [
      provider,
    ]);
    if (!row) return;
    const breaker = breakerOf(row);
    const at = ctx.clock.now();
    const { next, opened } = afterOutcome(breaker, outcome, at);
    if (sameBreaker(breaker, next)) return;
    await writeBreaker(em, provider, next);
    if (opened)
      await recordAdminEvent(em, aiSubjects.breakerOpened, {
        targetKind: "provider",
        targetKey: provider,
        status: "open",
        at,
      });
  });
}

/** Closes the provider's breaker, failures 0 (an operator's reset), in the caller's transaction. */
export async function resetBreaker(em: EntityManager, provider: string): Promise<void> {
  const [row] = await sql<BreakerColumns>(em, `select ${COLUMNS} from {providers} where key = ?`, [provider]);
  if (row) await writeBreaker(em, provider, closed(breakerOf(row)));
}

async function writeBreaker(em: EntityManager, provider: string, breaker: Breaker): Promise<void> {
  await sql(
    em,
    `update {providers} set breaker_state = ?, breaker_failures = ?, breaker_opened_at = ?, breaker_reopens_at = ?,
       breaker_trial_until = ?
     where key = ?`,
    [breaker.state, breaker.failures, breaker.openedAt, breaker.reopensAt, breaker.trialUntil, provider],
  );
}

function breakerOf(row: BreakerColumns): Breaker {
  const time = (at: Date | string | null) => (at === null ? null : new Date(at));
  return {
    state: row.breaker_state,
    failures: Number(row.breaker_failures),
    threshold: Number(row.breaker_threshold),
    openMs: Number(row.breaker_open_ms),
    openedAt: time(row.breaker_opened_at),
    reopensAt: time(row.breaker_reopens_at),
    trialUntil: time(row.breaker_trial_until),
  };
}
