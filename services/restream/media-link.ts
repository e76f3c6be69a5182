import { create } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
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
      await api.reportSession({
        ...input,
        endReason: input.endReason ?? "",
        media: media && create(MediaInfoSchema, media),
        playback: playback && create(PlaybackDescriptorSchema, { ...playback, reason: playback.reason ?? "" }),
      });
    },
    async reportOutput({ progress, ...input }) {
      await api.reportOutput({
        ...input,
        reason: input.reason ?? "",
        progress: progress && {
          ...progress,
          frames: BigInt(progress.frames),
          outTimeMs: BigInt(Math.round(progress.outTimeMs)),
        },
      });
    },
    async appendLogs({ outputId, lines, workerId, generation }) {
      // The worker API keeps output logs only: a session's own lines (the ingest's) are the worker's to log.
      if (outputId) await api.appendLogs({ workerId, generation, outputId, lines });
    },
    async *commands(input, signal) {
      for await (const command of api.watchCommands(input, { signal })) yield commandOf(command);
    },
  };
}

function orderOf(order: OutputOrderMessage): OutputOrder {
  return {
    outputId: order.outputId,
    url: order.url,
    format: order.format === "mpegts" ? "mpegts" : "flv",
    secrets: order.secrets,
  };
}

function commandOf(command: WorkerCommandMessage): WorkerCommand {
  switch (command.kind) {
    case "end_session":
      return { kind: "end_session", sessionId: command.sessionId, reason: command.reason };
    case "start_output":
      return { kind: "start_output", sessionId: command.sessionId, output: orderOf(command.output!) };
    case "stop_output":
      return { kind: "stop_output", outputId: command.outputId };
    default:
      throw new Error(`unknown worker command ${command.kind}`);
  }
}
