import type { DescMessage, MessageShape } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import { ProblemSchema } from "../../../gen/pf/v1/problem_pb.js";
import { sql } from "../db/sql.js";
import { consumer, type Consumer, type ConsumerHost, type EventMeta } from "../events/consumer.js";
import { notAnswered } from "../runtime/call.js";
import type { Logger } from "../runtime/logger.js";

/** What an effect runs on: a service context (its logger, transactions, typed clients in `apply`). */
export interface EffectHost extends ConsumerHost {
  logger: Logger;
}

/**
 * A reliable effect in another service (README "Reliable effects"): the
 * owner records an event in its outbox in the transaction of its change;
 * this durable consumer of the owner's own, on that subject, applies it in
 * the other service.
 */
export interface Effect<C extends EffectHost, Desc extends DescMessage> {
  /** Unique among the service's consumers; names the durable consumer and the idempotency keys. */
  name: string;
  subject: string;
  event: Desc;
  /** Where a new effect starts; "all" by default, so no event written before the first start is missed. */
  from?: "all" | "new";
  /**
   * Calls the other service (`ctx.client(...)`), sending `key` as the call's
   * idempotency key: the same for every delivery of this event, so a retry
   * after a lost answer or a crash is applied once by the callee. Called
   * outside any transaction. Throwing a callee's definite refusal (a problem
   * 4xx but 401/403/408/429/499) records it; anything else is retried.
   */
  apply(event: MessageShape<Desc>, ctx: C, key: string, meta: EventMeta): Promise<void>;
  /**
   * Failures of one event that are not the callee's silence (an error of `apply` itself, the callee's 500 on
   * it) after which it is set aside, so the events after it go on; 10 unless given.
   */
  maxFailures?: number;
  /**
   * The object the effect changes, when order matters only per object (a post's thread, a forum thread): a
   * backlog's events of different objects are then applied side by side. Without it, strictly in order.
   */
  orderKey?(event: MessageShape<Desc>): string;
}

/** Failures of one event, the callee not silent, after which it is set aside. */
const MAX_FAILURES = 10;

/**
 * Declares an effect: a module lists it beside its consumers. The events
 * delivered are applied in batches (the consumer's, up to 64): which the inbox
 * holds in one transaction, `apply` for the others in order outside any, their
 * inbox marks in one more. When the callee did not answer (`notAnswered`:
 * down, 503, a deadline, our own credentials or rate refused) the delivery
 * fails and comes back after a growing pause (the consumer's retry in place:
 * 250 ms … 30 s), holding the events after it, for as long as it takes. A
 * definite refusal is recorded in `effect_refusals` (logged as an error) and
 * the event counts as handled: a refusal would be the same on every retry. So
 * is a failure that is no silence (`apply` throwing, the callee's 500) once it
 * has failed `maxFailures` times: set aside, it no longer holds the rest. A
 * crash between the call and the inbox mark calls again with the same key.
 */
export function effect<C extends EffectHost, Desc extends DescMessage>(definition: Effect<C, Desc>): Consumer<C> {
  // Per event being retried in place: its failures that were not the callee's silence.
  const failures = new Map<string, number>();
  return consumer<C, Desc>({
    name: definition.name,
    subject: definition.subject,
    event: definition.event,
    from: definition.from ?? "all",
    orderKey: definition.orderKey,
    async outside(event, meta, ctx) {
      try {
        await definition.apply(event, ctx, `${definition.name}:${meta.id}`, meta);
        failures.delete(meta.id);
      } catch (error) {
        const counted = notSilence(error) ? (failures.get(meta.id) ?? 0) + 1 : 0;
        const refusal =
          definiteRefusal(error) ?? (counted >= (definition.maxFailures ?? MAX_FAILURES) ? setAside(error) : undefined);
        if (!refusal) {
          if (counted > 0) failures.set(meta.id, counted);
          ctx.logger.warn({ err: error, effect: definition.name, event: meta.id }, "effect not applied; retried");
          throw error;
        }
        failures.delete(meta.id);
        ctx.logger.error({ effect: definition.name, event: meta.id, ...refusal }, "effect refused or set aside");
        await ctx.transaction((em) => recordRefusal(em, definition.name, meta, refusal));
      }
    },
    // Applied outside: only the inbox mark is written, by one statement.
    marksOnly: true,
    async handle() {},
  });
}

interface Refusal {
  status: number;
  code: string;
  detail: string;
}

function definiteRefusal(error: unknown): Refusal | undefined {
  if (!(error instanceof ConnectError) || notAnswered(error)) return undefined;
  const [problem] = error.findDetails(ProblemSchema);
  return problem && { status: problem.status, code: problem.code, detail: problem.detail };
}

/** A failure that is not the callee's silence: `apply` itself failed, or the callee answered 500 to this event. */
function notSilence(error: unknown): boolean {
  if (!(error instanceof ConnectError)) return true;
  const [problem] = error.findDetails(ProblemSchema);
  return problem?.status === 500;
}

/** An event set aside after its failures: kept beside the refusals, as the callee's problem or `effect.failed`. */
function setAside(error: unknown): Refusal {
  const [problem] = error instanceof ConnectError ? error.findDetails(ProblemSchema) : [];
  const detail = error instanceof Error ? error.message : String(error);
  return { status: problem?.status ?? 500, code: problem?.code ?? "effect.failed", detail: problem?.detail ?? detail };
}

async function recordRefusal(em: EntityManager, effect: string, meta: EventMeta, refusal: Refusal): Promise<void> {
  await sql(
    em,
    `insert into {effect_refusals} (effect, event_id, subject, status, code, detail)
       values (?, ?, ?, ?, ?, ?) on conflict do nothing`,
    [effect, meta.id, meta.subject, refusal.status, refusal.code, refusal.detail.slice(0, 2000)],
  );
}

/** A refused effect, as the owner reads it. */
export interface EffectRefusal extends Refusal {
  effect: string;
  eventId: string;
  subject: string;
  refusedAt: Date;
}

/** The refusals of one effect, newest first (at most `limit`). */
export async function effectRefusals(em: EntityManager, effect: string, limit = 100): Promise<EffectRefusal[]> {
  const rows: Record<string, unknown>[] = await sql(
    em,
    `select effect, event_id, subject, status, code, detail, refused_at from {effect_refusals}
       where effect = ? order by refused_at desc, event_id desc limit ?`,
    [effect, limit],
  );
  return rows.map((row) => ({
    effect: String(row.effect),
    eventId: String(row.event_id),
    subject: String(row.subject),
    status: Number(row.status),
    code: String(row.code),
    detail: String(row.detail),
    refusedAt: new Date(row.refused_at as string),
  }));
}
