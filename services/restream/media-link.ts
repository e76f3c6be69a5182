import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import {
  type OutputOrder as OutputOrderMessage,
  RestreamWorkerService,
  type WorkerCommand as WorkerCommandMessage,
} from "../../gen/pf/restream/v1/worker_pb.js";
import { MediaInfoSchema, PlaybackDescriptorSchema } from "../../gen/pf/restream/v1/events_pb.js";
import type { RestreamContext } from "./context.js";
import type { ControlPlane, OutputOrder, WorkerCommand } from "./media/control-plane.js";

/**
 * The embedded media worker's link to the control plane: its ControlPlane over the worker API (RestreamWorkerService),
 * called with restream's own token, as an adapter for a real media server would call it over gRPC.
 */
export function mediaLink(ctx: RestreamContext): ControlPlane {
  const api: Client<typeof RestreamWorkerService> = ctx.client(RestreamWorkerService);
  return {
    async register(input) {
      return { generation: (await api.registerWorker(input)).generation };
    },
    async heartbeat(input) {
      return { fenced: (await api.heartbeat(input)).fenced };
    },
    async authorizeIngest(input) {
      const answer = await api.authorizeIngest(input);
      if (!answer.granted) return { granted: false, reason: answer.reason };
      return {
        granted: true,
        sessionId: answer.sessionId,
        streamId: answer.streamId,
        outputs: answer.outputs.map(orderOf),
      };
    },
    async reportSession({ media, playback, ...input }) {
      await final(
        api.reportSession({
          ...input,
          endReason: input.endReason ?? "",
          media: media && create(MediaInfoSchema, media),
          playback: playback && create(PlaybackDescriptorSchema, { ...playback, reason: playback.reason ?? "" }),
        }),
      );
    },
    async reportOutput({ progress, ...input }) {
      await final(
        api.reportOutput({
          ...input,
          reason: input.reason ?? "",
          progress: progress && {
            ...progress,
            frames: BigInt(progress.frames),
            outTimeMs: BigInt(Math.round(progress.outTimeMs)),
          },
        }),
      );
    },
    async appendLogs({ outputId, sessionId, lines, workerId, generation }) {
      if (outputId) return void (await api.appendLogs({ workerId, generation, outputId, lines }));
      // The worker API keeps output logs only: a session's own lines (the ingest's, redacted and bounded by the
      // worker) go to this process's log.
      ctx.logger.info({ sessionId, lines }, "media worker: session log");
    },
    async *commands({ afterSeq, ...input }, signal) {
      for await (const command of api.watchCommands({ ...input, afterSeq: BigInt(afterSeq) }, { signal }))
        yield commandOf(command);
    },
  };
}

/** Answers a report refused for good (missing, invalid, fenced) as done; rejects only when it may pass if tried again. */
async function final(report: Promise<unknown>): Promise<void> {
  try {
    await report;
  } catch (error) {
    if (!REFUSALS.has(ConnectError.from(error).code)) throw error;
  }
}

const REFUSALS = new Set([
  Code.NotFound,
  Code.InvalidArgument,
  Code.Aborted,
  Code.FailedPrecondition,
  Code.PermissionDenied,
  Code.Unauthenticated,
]);

function orderOf(order: OutputOrderMessage): OutputOrder {
  return {
    outputId: order.outputId,
    url: order.url,
    format: order.format === "mpegts" ? "mpegts" : "flv",
    secrets: order.secrets,
  };
}

function commandOf(command: WorkerCommandMessage): WorkerCommand {
  const seq = Number(command.seq);
  switch (command.kind) {
    case "end_session":
      return { seq, kind: "end_session", sessionId: command.sessionId, reason: command.reason };
    case "start_output":
      return { seq, kind: "start_output", sessionId: command.sessionId, output: orderOf(command.output!) };
    case "stop_output":
      return { seq, kind: "stop_output", outputId: command.outputId };
    default:
      throw new Error(`unknown worker command ${command.kind}`);
  }
}
