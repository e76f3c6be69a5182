import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { AiService } from "../../../gen/pf/ai/v1/ai_pb.js";
import type { RunCreateRequest, RunCreateResult } from "../../../gen/pf/ai/v1/runs_pb.js";
import { callerOf, ownerOf } from "../../kit/auth/principal.js";
import type { AiContext } from "../context.js";
import type { RunKind } from "../domain/operations.js";
import { answerRun } from "../engine/await.js";
import { planRun } from "../engine/plan.js";
import { startRun } from "../engine/start.js";

type Handlers = Pick<
  ServiceImpl<typeof AiService>,
  "createRun" | "chat" | "classify" | "embed" | "enrich" | "extract" | "generate" | "summarize"
>;

/** Workflow runs and the direct operations (run create): one path, the route deciding which kind of run. */
export function runHandlers(ctx: AiContext): Handlers {
  const run =
    (kind: RunKind) =>
    async (request: RunCreateRequest, call: HandlerContext): Promise<RunCreateResult> => {
      const plan = await planRun(ctx.orm.em.fork(), kind, request, callerOf(call).principal, ownerOf(call));
      const started = await startRun(ctx, plan, { retryOf: null, noCache: request.noCache });
      return answerRun(ctx, call, started, request.waitMs);
    };
  return {
    createRun: run("workflow"),
    chat: run("chat"),
    classify: run("classify"),
    embed: run("embed"),
    enrich: run("enrich"),
    extract: run("extract"),
    generate: run("generate"),
    summarize: run("summarize"),
  };
}
