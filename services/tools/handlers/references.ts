import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { JobRequest } from "../../../gen/pf/tools/v1/jobs_pb.js";
import type { ToolsService } from "../../../gen/pf/tools/v1/tools_pb.js";
import { callerOf } from "../../kit/auth/principal.js";
import { invalid } from "../../kit/handler/problem.js";
import type { ToolsContext } from "../context.js";
import type { JobRow } from "../db/entities.js";
import { jobView, lockedJob, saveJob } from "../db/jobs.js";
import { addReference, isReferenced, removeReference } from "../db/references.js";
import { jobNotFound, jobNotSucceeded, resultExpired } from "../domain/jobs/problems.js";
import { callerKeyOf } from "../domain/run/caller.js";

type Handlers = Pick<ServiceImpl<typeof ToolsService>, "putReference" | "deleteReference">;

/**
 * References `<service>:<type>:<id>` keeping a succeeded job's result: while any exists the result never expires;
 * once the last is removed it expires again after PF_TOOLS_RESULT_TTL_MS.
 */
export function referenceHandlers(ctx: ToolsContext): Handlers {
  /** The job, locked, when the caller may reference it: its owner, or a service acting for nobody (content it keeps). */
  const referable = async (em: EntityManager, request: JobRequest, call: HandlerContext): Promise<JobRow> => {
    if (request.ref === "") throw invalid("ref", "Name the reference: <service>:<type>:<id>.");
    const { principal, person } = callerOf(call);
    const row = await lockedJob(em, request.id);
    const keeper = principal.kind === "service" && person === undefined;
    if (!row || !(keeper || row.owner === callerKeyOf(ctx, call))) throw jobNotFound(request.id);
    return row;
  };
  return {
    /** Idempotent: a reference already there changes nothing. 409 before success, 410 once expired. */
    async putReference(request, call) {
      return ctx.transaction(async (em) => {
        const row = await referable(em, request, call);
        if (row.state !== "succeeded") throw jobNotSucceeded(row.id, row.state);
        if (row.expiredAt) throw resultExpired(row.id);
        await addReference(em, row.id, request.ref, callerKeyOf(ctx, call), ctx.clock.now());
        // Referenced, the result has no expiry (the sweep looks only at jobs that have one).
        await saveJob(em, row, { expiresAt: null });
        return jobView(em, row);
      });
    },

    /** Idempotent: removing a reference that is not there changes nothing. */
    async deleteReference(request, call) {
      return ctx.transaction(async (em) => {
        const row = await referable(em, request, call);
        const removed = await removeReference(em, row.id, request.ref);
        if (removed && row.state === "succeeded" && !row.expiredAt && !(await isReferenced(em, row.id))) {
          const at = ctx.clock.now();
          await saveJob(em, row, { expiresAt: new Date(at.getTime() + ctx.settings.resultTtlMs) });
        }
        return jobView(em, row);
      });
    },
  };
}
