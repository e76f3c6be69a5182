import type { EntityManager } from "@mikro-orm/postgresql";
import { problemOf } from "../../kit/handler/problem.js";
import { leasedJob } from "../../kit/service/lease.js";
import type { Worker } from "../../kit/service/module.js";
import type { BillingContext } from "../context.js";
import { approveIntent, declineIntent, lockIntent } from "../db/intents.js";
import { requireThawed } from "../db/ledger.js";
import {
  claimProviderEvent,
  recordOutcome,
  type ClaimedEvent,
  type EventClaim,
  type EventOutcome,
} from "../db/provider-events.js";
import { settleIntent } from "../db/settlement.js";
import type { Transition } from "../domain/intents.js";

/** A claimed event and what applying it came to. */
export type AppliedEvent = ClaimedEvent & EventOutcome;

/**
 * Applies the stored provider events that are pending, and the held ones
 * unless the economy is frozen, in `seq` order, each in its own short
 * transaction. Each is claimed with FOR UPDATE SKIP LOCKED, so instances
 * running this at once never apply one event twice. Failed events wait for
 * an admin's reprocess.
 */
export async function applyProviderEvents(ctx: BillingContext): Promise<void> {
  let after = "0";
  for (;;) {
    const applied = await applyOne(ctx, { nextAfter: after });
    if (!applied) return;
    after = applied.seq;
  }
}

/**
 * The safety net: whatever an apply after a commit or a thaw left pending (a
 * crash, a lost connection) is applied within seconds, by one instance at a time.
 */
export const providerEvents: Worker<BillingContext> = leasedJob(
  "billing.provider-events",
  { everyMs: 5_000 },
  applyProviderEvents,
);

/** Applies a delivery just stored as pending, unless another instance already has it. */
export function applyDelivered(ctx: BillingContext, id: string): Promise<AppliedEvent | undefined> {
  return applyOne(ctx, { delivered: id });
}

/** Applies a stored event again, whatever its state (an admin's reprocess); undefined when there is none. */
export function reapply(ctx: BillingContext, id: string): Promise<AppliedEvent | undefined> {
  return applyOne(ctx, { any: id });
}

/**
 * Claims one event and applies it in one transaction, recording what came of
 * it. When applying throws, its transaction is gone: the event is marked in a
 * second one, held if the economy froze meanwhile, else failed, unless
 * another instance changed it in between.
 */
async function applyOne(ctx: BillingContext, which: EventClaim): Promise<AppliedEvent | undefined> {
  let claimed: ClaimedEvent | undefined;
  let outcome: EventOutcome;
  try {
    outcome = await ctx.transaction(async (em) => {
      claimed = await claimProviderEvent(em, which);
      if (!claimed) return { status: "pending", detail: "" };
      const applied = await apply(em, ctx, claimed);
      await recordOutcome(em, claimed.id, applied, ctx.clock.now());
      return applied;
    });
  } catch (error) {
    if (!claimed) throw error;
    const found = problemOf(error);
    outcome =
      found.code === "economy.frozen"
        ? { status: "held", detail: "" }
        : {
            status: "failed",
            detail: found.status >= 500 ? String((error as Error).message ?? error).slice(0, 500) : found.detail,
          };
    if (outcome.status === "failed")
      ctx.logger.warn({ err: error, event: claimed.id }, "provider event failed; an admin may reprocess it");
    const seen = claimed;
    await ctx.transaction((em) => recordOutcome(em, seen.id, outcome, ctx.clock.now(), seen.status));
  }
  return claimed && { ...claimed, ...outcome };
}

/**
 * What one event does to its intent: order.approved approves, order.declined
 * declines, payment.captured settles (even before its approval arrived). An
 * event for an unknown order, of an unknown type, or stale for its intent's
 * state is ignored; an event applied before stays applied when applying it
 * again does nothing (settlement is once).
 */
async function apply(em: EntityManager, ctx: BillingContext, event: ClaimedEvent): Promise<EventOutcome> {
  await requireThawed(em);
  const body = ctx.providers.get(event.provider).readEvent(event.payload);
  const intent = await lockIntent(em, { provider: event.provider, providerOrderId: event.provider_order_id });
  if (!intent)
    return { status: "ignored", detail: `No intent has the ${event.provider} order ${event.provider_order_id}.` };
  const at = ctx.clock.now();
  let change: Transition;
  switch (body.type) {
    case "order.approved":
      change = approveIntent(intent, at);
      break;
    case "order.declined":
      change = await declineIntent(em, intent, body.reason, at);
      break;
    case "payment.captured":
      change = await settleIntent(em, ctx, intent, `provider:${event.provider}`);
      break;
    default:
      return { status: "ignored", detail: `Billing does not act on ${body.type} events.` };
  }
  if (change.kind === "move") return { status: "applied", detail: "" };
  const detail = change.kind === "stale" ? change.detail : `The intent is already ${intent.status}.`;
  return { status: event.status === "applied" ? "applied" : "ignored", detail };
}
