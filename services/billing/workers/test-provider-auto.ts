import { BillingService } from "../../../gen/pf/billing/v1/billing_pb.js";
import { ProviderEventStatus } from "../../../gen/pf/billing/v1/intents_pb.js";
import { outsideCall } from "../../kit/runtime/call.js";
import { leasedJob } from "../../kit/service/lease.js";
import type { Worker } from "../../kit/service/module.js";
import type { BillingContext } from "../context.js";
import { scheduleApproval, takeDueApprovals, type DueApproval } from "../db/test-provider.js";
import { TEST_PROVIDER, type TestProvider } from "../provider/test.js";

/** Approvals one pass takes at most; the next pass takes the rest. */
const BATCH = 20;
/** Tries of one order's approval that billing ignores (its intent not written yet) before auto mode gives up. */
const ATTEMPTS = 3;
/** How long a taken approval is held: a crashed instance's is due again after it. */
const HELD_MS = 10_000;

/**
 * Auto mode of the test-mode provider: approves each order that is due (a
 * moment after it opened) and delivers the order.approved webhook through
 * billing's own webhook RPC, signed like any other. Due times live in the
 * order's row, so an approval survives a crash and any instance may make it.
 * An approval billing ignores (the intent is not written yet) is tried again
 * a little later, as a new event.
 */
async function approveDue(ctx: BillingContext): Promise<void> {
  const provider = ctx.providers.get(TEST_PROVIDER) as TestProvider;
  const at = ctx.clock.now();
  const due = await ctx.transaction((em) => takeDueApprovals(em, at, new Date(at.getTime() + HELD_MS), BATCH));
  await Promise.all(due.map((order) => approveOne(ctx, provider, order)));
}

async function approveOne(ctx: BillingContext, provider: TestProvider, order: DueApproval): Promise<void> {
  const attempts = order.attempts + 1;
  let again: boolean;
  try {
    const delivery = await provider.approve(order.id);
    const answer = await outsideCall(() =>
      ctx
        .client(BillingService)
        .receiveProviderWebhook(
          { provider: provider.name, payload: Buffer.from(delivery.body) },
          { headers: { ...delivery.headers } },
        ),
    );
    again = answer.status === ProviderEventStatus.IGNORED;
  } catch (error) {
    ctx.logger.warn({ err: error, order: order.id }, "test provider auto mode: the approval webhook was not delivered");
    again = true;
  }
  const next = again && attempts < ATTEMPTS ? new Date(ctx.clock.now().getTime() + 1000 * attempts) : null;
  await ctx.transaction((em) => scheduleApproval(em, order.id, next, attempts));
}

const job = leasedJob<BillingContext>("billing.test-provider-auto", { everyMs: 250 }, approveDue);

/** Runs only where the test-mode provider is on in auto mode. */
export const testProviderAuto: Worker<BillingContext> = async (ctx) =>
  ctx.settings.testProvider && ctx.settings.testProviderAuto === "approve" ? job(ctx) : async () => undefined;
