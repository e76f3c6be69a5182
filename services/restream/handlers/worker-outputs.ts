import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import { WorkerReportResultSchema, type RestreamWorkerService } from "../../../gen/pf/restream/v1/worker_pb.js";
import type { RestreamContext } from "../context.js";
import { destinationOfOutput } from "../db/destinations.js";
import { appendLogLines } from "../db/logs.js";
import { findOutput, outputNotFound, saveOutputs, type StoredHealth } from "../db/outputs.js";
import { sessionById } from "../db/sessions.js";
import { currentGeneration } from "../db/workers.js";
import { outputStep, type OutputState } from "../domain/output-states.js";
import { redactLine } from "../domain/redact.js";
import { changeOutputState, secretsOf } from "../outputs.js";

type WorkerOutputHandlers = Pick<ServiceImpl<typeof RestreamWorkerService>, "reportOutput" | "appendLogs">;

/** The worker API's outputs: state and progress reports, log lines (redacted again, bounded). */
export function workerOutputHandlers(ctx: RestreamContext): WorkerOutputHandlers {
  /** The output a report of this generation is about, locked; undefined when it belongs to another generation. */
  const reported = async (em: EntityManager, request: { workerId: string; generation: number; outputId: string }) => {
    await currentGeneration(em, request.workerId, request.generation);
    const output = await findOutput(em, request.outputId, true);
    if (!output || output.workerId !== request.workerId) throw outputNotFound(request.outputId);
    return output.generation === request.generation ? output : undefined;
  };
  /**
   * Lines as stored: the output's own secrets (its destination's key and passphrase) and every URL's path masked.
   * Read and redacted before the transaction, so no lock is held while the patterns run.
   */
  const redacted = async (outputId: string, lines: string[]) => {
    const em = ctx.orm.em.fork();
    const output = await findOutput(em, outputId);
    const destination = output && (await destinationOfOutput(em, output.destinationId));
    const { key, passphrase } = destination ? secretsOf(ctx, destination) : { key: "", passphrase: "" };
    return lines.map((line) => redactLine(line, [key, passphrase]));
  };

  return {
    /**
     * Applies a report of the output's generation: a change of state by the state machine (a stopped or failed
     * output never comes back: applied false), restarts counted when it reconnects, its progress as health. An event
     * on each change of state, none on progress alone.
     */
    async reportOutput(request) {
      const [redactedReason = ""] = request.reason === "" ? [] : await redacted(request.outputId, [request.reason]);
      const applied = await ctx.transaction(async (em) => {
        const output = await reported(em, request);
        if (!output) return false;
        const at = ctx.clock.now();
        const step = outputStep(output.state as OutputState, request.state as OutputState);
        if (step.kind === "ignored") return false;
        if (request.progress) {
          const { frames, fps, bitrateKbps, outTimeMs, speed } = request.progress;
          const health: StoredHealth = {
            frames: Number(frames),
            fps,
            bitrateKbps,
            outTimeMs: Number(outTimeMs),
            speed,
            reportedAt: at.toISOString(),
          };
          output.health = health as unknown as Record<string, unknown>;
        }
        if (step.kind === "same") {
          await saveOutputs(em);
          return request.progress !== undefined;
        }
        if (step.restarted) output.restarts += 1;
        const ended = step.state === "stopped" || step.state === "failed";
        const reason = ended ? redactedReason : "";
        const session = (await sessionById(em, output.sessionId))!;
        await changeOutputState(em, output, session.owner, { state: step.state, reason, at });
        return true;
      });
      return create(WorkerReportResultSchema, { applied });
    },

    /** Stores an output's lines, each redacted again and cut to 500 characters; only its last PF_RESTREAM_LOG_LINES stay. */
    async appendLogs(request) {
      const lines = await redacted(request.outputId, request.lines);
      const applied = await ctx.transaction(async (em) => {
        const output = await reported(em, request);
        if (!output || lines.length === 0) return false;
        await appendLogLines(em, output, lines, ctx.clock.now(), ctx.settings.logLines);
        return true;
      });
      return create(WorkerReportResultSchema, { applied });
    },
  };
}
