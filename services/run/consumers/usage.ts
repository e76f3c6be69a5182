import { JobEventSchema } from "../../../gen/pf/run/v1/events_pb.js";
import { effect } from "../../kit/effects/effect.js";
import type { RunContext } from "../context.js";
import { METERED } from "../events.js";

/**
 * Billing per wall-clock second: each run.job.metered records the job's usage seconds with billing (service run,
 * operation function.invoke, unit s), against its project, the job-run service paying. Billing records one usage
 * per job id, so a redelivery or a retry after a lost answer records nothing twice.
 */
export const usageRecords = effect<RunContext, typeof JobEventSchema>({
  name: "usage",
  subject: METERED,
  event: JobEventSchema,
  async apply(event, ctx) {
    await ctx.billing.recordUsage({
      operation: "function.invoke",
      unit: "s",
      quantity: event.usageSeconds,
      projectId: event.projectId,
      reference: event.jobId,
    });
  },
  orderKey: (event) => event.jobId,
});
