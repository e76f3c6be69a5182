import type { EntityManager } from "@mikro-orm/postgresql";
import { problem } from "../../kit/handler/problem.js";
import {
  reserve,
  spend,
  type Quota,
  type QuotaContext,
  type Reservation,
  type Spent,
} from "../../kit/quotas/quotas.js";
import type { ToolDescriptor } from "../catalogue/descriptor.js";
import { QUOTA_CLASSES, type QuotaClass, type ToolsSettings } from "../settings.js";

const HOUR = 3_600_000;

/**
 * The quota of a class (`tools.light`, `tools.file`, `tools.probe`): its budget of units per caller in each hour,
 * fixed windows from the epoch. A reservation is held for one run or one job's creation, far less than the hour
 * after which the sweep (`expireReservations`) gives back one a crashed process left.
 */
export function toolsQuota(settings: ToolsSettings, quotaClass: QuotaClass): Quota {
  const limit = settings.quotas[quotaClass];
  return {
    name: `tools.${quotaClass}`,
    limit,
    windowMs: HOUR,
    expireAfterMs: HOUR,
    // A windowed quota's refusal always knows when its window ends.
    refused: (_caller, retryAfterSeconds = 1) =>
      problem(
        429,
        "tools.quota_exceeded",
        `This run would pass your ${quotaClass} quota of ${limit} units an hour; try again in ${retryAfterSeconds} seconds.`,
        { quota_class: quotaClass, limit, retry_after_seconds: retryAfterSeconds },
      ),
  };
}

/** Every class's quota, for the sweep. */
export const toolsQuotas = (settings: ToolsSettings): Quota[] =>
  QUOTA_CLASSES.map((quotaClass) => toolsQuota(settings, quotaClass));

/**
 * Takes a run's cost (`tool.cost` units of its quota class) for `callerKey` (`callerKeyOf`): 429
 * tools.quota_exceeded, counting nothing, when it does not fit. The units are held, so concurrent runs never pass
 * the budget together; the caller settles them (`settle(tool.cost)`) once the run happened (succeeded or failed)
 * and releases them when it was refused after all (a target refused, a file the job does not take), so a refused
 * run takes nothing. In `em` (a job's creating transaction) or a short one of its own.
 */
export function takeQuota(
  ctx: QuotaContext & { settings: ToolsSettings },
  callerKey: string,
  tool: ToolDescriptor,
  em?: EntityManager,
): Promise<Reservation> {
  return reserve(ctx, toolsQuota(ctx.settings, tool.quotaClass), callerKey, tool.cost, { em });
}

/**
 * Spends an inline run's cost up front, in one statement (the run route's hot path): 429 tools.quota_exceeded,
 * counting nothing, when it does not fit; exact under concurrency. Given back (`giveBack`) when the tool refused the
 * run after all (a target refused or throttled); a run that happened, succeeded or failed, keeps it.
 */
export function spendQuota(
  ctx: QuotaContext & { settings: ToolsSettings },
  callerKey: string,
  tool: ToolDescriptor,
): Promise<Spent> {
  return spend(ctx, toolsQuota(ctx.settings, tool.quotaClass), callerKey, tool.cost);
}
