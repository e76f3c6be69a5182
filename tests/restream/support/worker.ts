import { createHash } from "node:crypto";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import type { MediaInfoSchema, PlaybackDescriptorSchema } from "../../../gen/pf/restream/v1/events_pb.js";
import {
  RestreamWorkerService,
  type OutputProgressSchema,
  type WorkerCommand,
} from "../../../gen/pf/restream/v1/worker_pb.js";
import { clientWithDefaults } from "../../../services/kit/rpc/clients.js";
import type { TestPlatform } from "../../support/platform.js";

let workers = 0;

/** The capability the worker API asks of its callers (a service token). */
export const WORKER_CAPABILITY = "restream.worker.report";

/**
 * A media worker as the control plane sees one, speaking the worker API with a service token: register for a
 * generation, heartbeat, authorise a publish by its key's SHA-256, report sessions and outputs, append log lines,
 * watch commands. Its generation is the last one it registered (`register` again for a new one; `as(generation)`
 * speaks for an older one).
 */
export class FakeWorker {
  generation = 0;

  private constructor(
    readonly id: string,
    readonly client: Client<typeof RestreamWorkerService>,
  ) {}

  /** A worker of its own id (`fake-<n>`), not registered yet, calling in memory. */
  static async of(t: TestPlatform, id = `fake-${++workers}-${Date.now()}`): Promise<FakeWorker> {
    const token = await t.token({ kind: "service", svc: "restream", caps: [WORKER_CAPABILITY] });
    return new FakeWorker(id, t.client(RestreamWorkerService, token));
  }

  /** The same over gRPC (HTTP/2 to the platform's RPC port), setting no timeout of its own. */
  static async overGrpc(t: TestPlatform): Promise<FakeWorker> {
    const token = await t.token({ kind: "service", svc: "restream", caps: [WORKER_CAPABILITY] });
    const transport = createGrpcTransport({ baseUrl: t.platform.rpcUrl });
    const headers = { authorization: `Bearer ${token}` };
    return new FakeWorker(
      `fake-${++workers}-${Date.now()}`,
      clientWithDefaults(RestreamWorkerService, transport, { headers }),
    );
  }

  /** Registers: a new generation, which fences the earlier ones. */
  async register(ingestUrl = "rtmp://127.0.0.1:1935/live", playbackBase = ""): Promise<number> {
    const { generation } = await this.client.registerWorker({ workerId: this.id, ingestUrl, playbackBase });
    this.generation = generation;
    return generation;
  }

  /** The same worker speaking for another generation (an old one, fenced). */
  as(generation: number): FakeWorker {
    const other = new FakeWorker(this.id, this.client);
    other.generation = generation;
    return other;
  }

  private get ref() {
    return { workerId: this.id, generation: this.generation };
  }

  heartbeat(sessionIds: string[] = []) {
    return this.client.heartbeat({ ...this.ref, sessionIds });
  }

  /** A publish with this ingest key: asked by its hash, as a real worker does. */
  authorize(key: string, remoteAddress = "203.0.113.7") {
    return this.client.authorizeIngest({ ...this.ref, keyHash: sha256(key), remoteAddress });
  }

  /** The session's media flows. */
  live(
    sessionId: string,
    media: MessageInitShape<typeof MediaInfoSchema> = { videoCodec: "h264", width: 1280, height: 720, fps: 30 },
    playback: MessageInitShape<typeof PlaybackDescriptorSchema> = {
      protocol: "flv",
      url: `http://127.0.0.1:8935/live/${sessionId}.flv`,
    },
  ) {
    return this.client.reportSession({ ...this.ref, sessionId, state: "live", media, playback });
  }

  /** The session ended on this worker (the encoder left, unless `endReason` says otherwise). */
  ended(sessionId: string, endReason = "") {
    return this.client.reportSession({ ...this.ref, sessionId, state: "ended", endReason });
  }

  reportOutput(outputId: string, state: string, reason = "", progress?: MessageInitShape<typeof OutputProgressSchema>) {
    return this.client.reportOutput({ ...this.ref, outputId, state, reason, progress });
  }

  appendLogs(outputId: string, lines: string[]) {
    return this.client.appendLogs({ ...this.ref, outputId, lines });
  }

  /**
   * This generation's commands after `afterSeq` (which acknowledges those up to it) as they come, until `signal`
   * aborts (or the stream ends: fenced).
   */
  commands(signal: AbortSignal, afterSeq = 0n): AsyncIterable<WorkerCommand> {
    return this.client.watchCommands({ ...this.ref, afterSeq }, { signal });
  }

  /**
   * Watches this generation's commands after `afterSeq` in the background, collecting them: `received` grows as
   * they come; `stop` ends the watch. `ended` resolves when the stream ends by itself (fenced), with its error if it
   * failed.
   */
  watch(afterSeq = 0n): { received: WorkerCommand[]; ended: Promise<unknown>; stop(): void } {
    const abort = new AbortController();
    const received: WorkerCommand[] = [];
    const ended = (async () => {
      for await (const command of this.commands(abort.signal, afterSeq)) received.push(command);
    })().then(
      () => undefined,
      (error: unknown) => (abort.signal.aborted ? undefined : error),
    );
    return { received, ended, stop: () => abort.abort() };
  }
}

export function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}
