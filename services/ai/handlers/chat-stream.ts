import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { AiService } from "../../../gen/pf/ai/v1/ai_pb.js";
import { RunStreamEventSchema, type RunStreamEvent } from "../../../gen/pf/ai/v1/runs_pb.js";
import { callerOf, ownerOf } from "../../kit/auth/principal.js";
import { Wakes } from "../../kit/runtime/wakes.js";
import type { AiContext } from "../context.js";
import { runById, runToProto } from "../db/runs.js";
import { hasEnded, type RunState } from "../domain/operations.js";
import { RECHECK_MS } from "../engine/await.js";
import { planRun } from "../engine/plan.js";
import { startRun } from "../engine/start.js";

type Handlers = Pick<ServiceImpl<typeof AiService>, "streamChat">;

/** The streamed chat (server-sent events). */
export function chatStreamHandlers(ctx: AiContext): Handlers {
  return {
    /**
     * Refusals as Chat, before the first event. Then `started`, a `delta` per piece of text as the provider sends it, and `done` with the
     * ended run. A client that goes away cancels the run. Never from the cache.
     */
    async *streamChat(request, call) {
      const { principal } = callerOf(call);
      const plan = await planRun(ctx.orm.em.fork(), "chat", request, principal, ownerOf(call));
      const pieces: string[] = [];
      const wakes = new Wakes(call.signal);
      let told = false;
      const onDelta = (text: string) => {
        pieces.push(text);
        wakes.wake();
      };
      const started = await startRun(ctx, plan, { retryOf: null, noCache: true, onDelta });
      const stop = ctx.news.watch(started.id, () => {
        told = true;
        wakes.wake();
      });
      const event = (value: RunStreamEvent["event"]) => create(RunStreamEventSchema, { event: value });
      let ended = false;
      try {
        yield event({ case: "started", value: runToProto(started) });
        let readAt = Date.now();
        while (!call.signal.aborted) {
          while (pieces.length > 0) yield event({ case: "delta", value: pieces.shift()! });
          // Read the run when this process ended it, else now and then (another instance's cancel).
          if (told || Date.now() - readAt >= RECHECK_MS) {
            told = false;
            readAt = Date.now();
            const row = (await runById(ctx.orm.em.fork(), started.id))!;
            if (hasEnded(row.state as RunState)) {
              ended = true;
              for (const piece of pieces.splice(0)) yield event({ case: "delta", value: piece });
              yield event({ case: "done", value: runToProto(row) });
              return;
            }
          }
          await wakes.next(RECHECK_MS);
        }
      } finally {
        stop();
        if (!ended) ctx.running.get(started.id)?.abort();
      }
    },
  };
}
