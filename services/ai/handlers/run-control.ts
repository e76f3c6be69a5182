import { create, fromJson, type JsonValue } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { AiService } from "../../../gen/pf/ai/v1/ai_pb.js";
import { RunCreateRequestSchema, RunCreateResultSchema } from "../../../gen/pf/ai/v1/runs_pb.js";
import { callerOf, ownerOf } from "../../kit/auth/principal.js";
import { problem } from "../../kit/handler/problem.js";
import type { AiContext } from "../context.js";
import type { RunRow } from "../db/entities.js";
import { retryOfRun, runById, runToProto } from "../db/runs.js";
import { refuseNamespaceOutsideClaim } from "../../kit/rpc/namespaces.js";
import type { RunKind } from "../domain/operations.js";
import { answerRun } from "../engine/await.js";
import { bareEnd, endWithEvent } from "../engine/outcome.js";
import { planRun } from "../engine/plan.js";
import { startRun } from "../engine/start.js";

type Handlers = Pick<ServiceImpl<typeof AiService>, "getRun" | "cancelRun" | "retryRun">;

const notFound = (id: string) => problem(404, "ai.run.not_found", `No run ${id} of yours.`, { id });

/** Reading, canceling and retrying a run. */
export function runControlHandlers(ctx: AiContext): Handlers {
  /** The caller's own run, else 404 (another caller's run answers as a missing one). */
  async function ownRun(id: string, call: HandlerContext): Promise<RunRow> {
    const row = await runById(ctx.orm.em.fork(), id);
    if (!row || row.caller !== ownerOf(call)) throw notFound(id);
    return row;
  }

  return {
    /** A service admitted by the `any` rule (ai.run.read) reads any run; everyone else their own. */
    async getRun(request, call) {
      const row =
        callerOf(call).admittedBy === "any"
          ? await runById(ctx.orm.em.fork(), request.id)
          : await ownRun(request.id, call);
      if (!row) throw notFound(request.id);
      return create(RunCreateResultSchema, { run: runToProto(row) });
    },

    /**
     * Ends a running run canceled (only if it still runs: a finish and a cancel never both win) and aborts its
     * call here; another instance executing it sees the cancel at its next lease renewal. An ended run as it is.
     */
    async cancelRun(request, call) {
      const row = await ownRun(request.id, call);
      const canceled = await ctx.transaction((em) => endWithEvent(em, row.id, bareEnd("canceled"), ctx.clock.now()));
      ctx.running.get(row.id)?.abort();
      ctx.news.tell(row.id);
      return create(RunCreateResultSchema, {
        run: runToProto(canceled ?? (await runById(ctx.orm.em.fork(), row.id))!),
      });
    },

    /**
     * A failed or canceled run asked again as a new run (its namespace and the quotas checked again); asking
     * again answers that same retry. 409 ai.run_not_retryable for a run that succeeded or has not ended.
     */
    async retryRun(request, call) {
      const row = await ownRun(request.id, call);
      if (row.state !== "failed" && row.state !== "canceled")
        throw problem(
          409,
          "ai.run_not_retryable",
          `The run ${row.id} is ${row.state}: only failed or canceled runs are retried.`,
          {
            id: row.id,
            state: row.state,
          },
        );
      const earlier = row.retriedBy
        ? await runById(ctx.orm.em.fork(), row.retriedBy)
        : await retryOfRun(ctx.orm.em.fork(), row.id);
      if (earlier) return answerRun(ctx, call, earlier, request.waitMs);
      const asked = fromJson(RunCreateRequestSchema, row.request as JsonValue);
      const { principal } = callerOf(call);
      // The retried run's namespace, held to this token's claim as the request's would be (ai.proto namespace_claim).
      refuseNamespaceOutsideClaim(principal.ns, row.namespace, "ai.namespace_refused");
      const plan = await planRun(ctx.orm.em.fork(), row.operation as RunKind, asked, principal, row.caller);
      const started = await startRun(ctx, plan, { retryOf: row.id, noCache: asked.noCache });
      return answerRun(ctx, call, started, request.waitMs);
    },
  };
}
