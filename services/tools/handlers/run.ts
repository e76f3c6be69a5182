import { create, type JsonObject } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { RunSchema, type Run, type RunRequest } from "../../../gen/pf/tools/v1/runs_pb.js";
import type { ToolsService } from "../../../gen/pf/tools/v1/tools_pb.js";
import { invalid } from "../../kit/handler/problem.js";
import { answerAccepted, waitWithinDeadline } from "../../kit/handler/status.js";
import type { ToolDescriptor } from "../catalogue/descriptor.js";
import type { ToolsContext } from "../context.js";
import { awaitJob } from "../domain/jobs/await.js";
import { createJob, type FilePiece } from "../domain/jobs/create.js";
import { hasEnded } from "../domain/jobs/states.js";
import { spendQuota } from "../domain/quota.js";
import { callerKeyOf } from "../domain/run/caller.js";
import { runInline } from "../domain/run/inline.js";
import { servedTool } from "../domain/run/served.js";
import type { JsonObject as ToolJson } from "../catalogue/descriptor.js";

type Handlers = Pick<ServiceImpl<typeof ToolsService>, "runTool">;

/** The run API: one route, each tool's auth class enforced by the kit (the `tool` relation) before it. */
export function runHandlers(ctx: ToolsContext): Handlers {
  /**
   * An inline tool's run, its first message alone: the outcome (200, succeeded or failed). The cost is spent before
   * the tool runs and kept once it ran (succeeded, failed or out of time), given back when the tool refused the run
   * (a problem: a target refused or throttled).
   */
  async function inline(call: HandlerContext, tool: ToolDescriptor, caller: string, input: ToolJson): Promise<Run> {
    const spent = await spendQuota(ctx, caller, tool);
    let outcome;
    try {
      outcome = await runInline(ctx, tool, input, caller, call.signal);
    } catch (error) {
      await spent.giveBack().catch((cause: unknown) => {
        ctx.logger.error({ err: cause }, "a refused run's quota units were not given back");
      });
      throw error;
    }
    return create(RunSchema, {
      tool: tool.id,
      state: outcome.state,
      // The output passed its schema: JSON through and through.
      ...(outcome.state === "succeeded" ? { output: outcome.output as JsonObject } : { failure: outcome.failure }),
      cost: tool.cost,
      tookMs: outcome.tookMs,
    });
  }

  /**
   * A job tool's run: a job owned by the caller, created with the files that follow the first message (the cost
   * taken with it), then waited for up to wait_ms (at most PF_TOOLS_MAX_WAIT_MS, and short of the call's
   * deadline): ended, it is answered 200; not yet, 202 with Location, where its owner reads it.
   */
  async function job(
    call: HandlerContext,
    tool: ToolDescriptor,
    caller: string,
    input: ToolJson,
    request: RunRequest,
    rest: AsyncIterator<RunRequest>,
  ): Promise<Run> {
    const started = performance.now();
    const created = await createJob(ctx, caller, tool, input, piecesOf(request, rest));
    const waitMs = waitWithinDeadline(call, Math.min(request.waitMs, ctx.settings.maxWaitMs));
    const now = waitMs > 0 ? await awaitJob(ctx, created.id, waitMs, call.signal) : created;
    if (!hasEnded(now.state)) answerAccepted(call, `/tools/api/v1/jobs/${now.id}`);
    return create(RunSchema, {
      tool: tool.id,
      state: now.state,
      job: now,
      cost: tool.cost,
      tookMs: Math.round(performance.now() - started),
    });
  }

  return {
    /**
     * The first message names the tool, its input and (a job tool) how long to wait; a job tool's files follow.
     * Nothing is taken from the caller's quota for a run refused before it ran: an unknown tool, one without a run
     * API (404), one that does not run here (503), bad input (400 tools.input.invalid), a file for an inline tool.
     */
    async runTool(requests, call) {
      const messages = requests[Symbol.asyncIterator]();
      const head = await messages.next();
      if (head.done || head.value.id === "")
        throw invalid("id", "The run's first message names the tool (id) and its input.");
      const request = head.value;
      const tool = servedTool(ctx, request.id);
      const caller = callerKeyOf(ctx, call);
      const input = ctx.schemas.input(tool, request.input ?? {});
      if (tool.execution === "job") return job(call, tool, caller, input, request, messages);
      await noFiles(tool.id, request, messages);
      return inline(call, tool, caller, input);
    },
  };
}

/** An inline tool's run is its first message alone: a file for it is refused before anything runs. */
async function noFiles(tool: string, head: RunRequest, rest: AsyncIterator<RunRequest>): Promise<void> {
  const more = head.fileName !== "" || head.fileType !== "" || head.chunk.length > 0 || !(await rest.next()).done;
  if (more) throw invalid("file_name", `The tool ${tool} runs inline and takes no files.`);
}

/** A job run's files: the first message (which may start the first file) and those after it, which carry files only. */
async function* piecesOf(head: RunRequest, rest: AsyncIterator<RunRequest>): AsyncGenerator<FilePiece> {
  yield head;
  for (let next = await rest.next(); !next.done; next = await rest.next()) {
    const { id, input, waitMs } = next.value;
    const named = id ? "id" : input ? "input" : waitMs ? "wait_ms" : undefined;
    if (named) throw invalid(named, `Field ${named} is set on the first message only; the following carry files.`);
    yield next.value;
  }
}
