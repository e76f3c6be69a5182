import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  IngestAuthorizeResultSchema,
  WorkerCommandSchema,
  WorkerHeartbeatResultSchema,
  WorkerRegisterResultSchema,
  WorkerReportResultSchema,
  type RestreamWorkerService,
  type WorkerCommand,
} from "../../../gen/pf/restream/v1/worker_pb.js";
import { newId } from "../../kit/handler/ids.js";
import { problem } from "../../kit/handler/problem.js";
import { waitWithinDeadline } from "../../kit/handler/status.js";
import { Wakes } from "../../kit/runtime/wakes.js";
import type { RestreamContext } from "../context.js";
import { acknowledgeCommands, commandsAfter, dropEarlierCommands, type PendingCommand } from "../db/commands.js";
import { keyByHash } from "../db/keys.js";
import { insertSession, openSessionOf, openSessionsOfWorker, sessionById } from "../db/sessions.js";
import { streamById } from "../db/streams.js";
import { currentGeneration, fenced, recordHeartbeat, registerWorker, workerById } from "../db/workers.js";
import { keyStatusAt } from "../domain/keys.js";
import { isFenced, isOpen } from "../domain/sessions.js";
import { judgeAutoOutputs, openAutoOutputs, orderFor, type Judgement } from "../outputs.js";
import { closeSession, sessionLive } from "../sessions.js";

type WorkerSessionHandlers = Pick<
  ServiceImpl<typeof RestreamWorkerService>,
  "registerWorker" | "heartbeat" | "authorizeIngest" | "reportSession" | "watchCommands"
>;

/** The worker API's sessions: registration and generations, heartbeats, ingest authorisation, session reports, commands. */
export function workerSessionHandlers(ctx: RestreamContext): WorkerSessionHandlers {
  return {
    /**
     * A new generation, one more than the worker's last: the sessions still open under its earlier generations are
     * interrupted (worker_lost), never resumed by this one, and their commands dropped.
     */
    async registerWorker(request) {
      const generation = await ctx.transaction(async (em) => {
        const at = ctx.clock.now();
        const current = await registerWorker(em, {
          id: request.workerId,
          ingestUrl: request.ingestUrl,
          playbackBase: request.playbackBase,
          at,
        });
        for (const session of await openSessionsOfWorker(em, request.workerId, current))
          await closeSession(ctx, em, session, { state: "interrupted", reason: "worker_lost", at, tellWorker: false });
        await dropEarlierCommands(em, request.workerId, current);
        return current;
      });
      return create(WorkerRegisterResultSchema, { generation });
    },

    /** Keeps the generation's sessions from the liveness sweep; `fenced` once another generation registered or it was lost. */
    async heartbeat(request) {
      const heard = await ctx.transaction((em) =>
        recordHeartbeat(em, request.workerId, request.generation, ctx.clock.now()),
      );
      return create(WorkerHeartbeatResultSchema, { fenced: !heard });
    },

    /**
     * A publish by its key's hash. Under the stream's lock (the one archive and rotation take): the key still
     * working (active, or in its grace), the stream not archived, no session open; then a `starting` session on this
     * generation and the outputs to start. A refusal opens nothing; the worker disconnects the encoder.
     */
    async authorizeIngest(request) {
      const known = await keyByHash(ctx.orm.em.fork(), request.keyHash);
      const judged = known ? await judgeAutoOutputs(ctx, known.streamId) : new Map<string, Judgement>();
      return ctx.transaction(async (em) => {
        await currentGeneration(em, request.workerId, request.generation);
        const refused = (reason: string) => create(IngestAuthorizeResultSchema, { granted: false, reason });
        const found = await keyByHash(em, request.keyHash);
        if (!found) return refused("unknown_key");
        const stream = (await streamById(em, found.streamId, true))!;
        // Read again under the lock: a rotation that committed meanwhile has its say.
        const key = (await keyByHash(em, request.keyHash))!;
        const at = ctx.clock.now();
        if (keyStatusAt(key.revokedAt, at) === "revoked") return refused("key_revoked");
        if (stream.archivedAt) return refused("stream_archived");
        if (await openSessionOf(em, stream.id)) return refused("session_open");
        const session = await insertSession(em, {
          id: newId("rss"),
          streamId: stream.id,
          owner: stream.owner,
          keyId: key.id,
          workerId: request.workerId,
          generation: request.generation,
          remoteAddress: request.remoteAddress,
          at,
        });
        const outputs = await openAutoOutputs(ctx, em, session, judged);
        return create(IngestAuthorizeResultSchema, {
          granted: true,
          sessionId: session.id,
          streamId: stream.id,
          outputs,
        });
      });
    },

    /**
     * A session of this generation goes live (media info, playback, recording per the stream's setting; its
     * started event) or ends (why: encoder_left unless the worker says; its outputs stopped; its ended event). A
     * report about a session already over, or already live, changes nothing (applied false).
     */
    async reportSession(request) {
      const applied = await ctx.transaction(async (em) => {
        await currentGeneration(em, request.workerId, request.generation);
        const session = await sessionById(em, request.sessionId, true);
        if (!session || session.workerId !== request.workerId)
          throw problem(404, "restream.session.not_found", `No session ${request.sessionId} on this worker.`);
        if (session.generation !== request.generation || !isOpen(session.state)) return false;
        const at = ctx.clock.now();
        if (request.state === "ended") {
          const reason = request.endReason || "encoder_left";
          await closeSession(ctx, em, session, { state: "ended", reason, at, tellWorker: false });
          return true;
        }
        if (session.state === "live") return false;
        const stream = (await streamById(em, session.streamId))!;
        const media = request.media ? withoutType(request.media) : null;
        const playback = request.playback
          ? { protocol: request.playback.protocol, url: request.playback.url, reason: request.playback.reason }
          : null;
        await sessionLive(em, session, stream, { media, playback, at });
        return true;
      });
      return create(WorkerReportResultSchema, { applied });
    },

    /**
     * The generation's commands after `after_seq`, in order: those waiting first, then each as it is issued (woken
     * after its commit in this process, found by a look every PF_RESTREAM_HEARTBEAT_MS otherwise). Those up to
     * `after_seq` are acknowledged: deleted, never sent again; a later one is sent again on the next watch until it
     * is acknowledged, so a stream cut in between loses none. A fenced generation is refused (409
     * restream.worker_fenced), and its open stream ends. The stream ends by itself short of the call's deadline
     * (PF_CALL_TIMEOUT_MS): a worker watches again.
     */
    async *watchCommands(request, call) {
      const { workerId, generation } = request;
      const wakes = new Wakes(call.signal);
      const unwatch = ctx.commits.on("worker-commands", wakes.wake);
      try {
        let after = request.afterSeq;
        for (let first = true; !call.signal.aborted; first = false) {
          const pending = await ctx.transaction(async (em) => {
            const worker = await workerById(em, workerId, "share");
            if (isFenced(worker, generation)) return undefined;
            if (first) await acknowledgeCommands(em, workerId, generation, after);
            return commandsAfter(em, workerId, generation, after);
          });
          if (pending === undefined) {
            if (first) throw fenced(workerId, generation);
            return;
          }
          for (const command of pending) {
            const message = await commandMessage(ctx, command);
            after = command.seq;
            if (message) yield message;
          }
          // The stream ends cleanly short of the call's deadline; the worker watches again at once.
          const wait = waitWithinDeadline(call, ctx.settings.heartbeatMs);
          if (wait === 0) return;
          if (pending.length === 0) await wakes.next(wait);
        }
      } finally {
        unwatch();
      }
    },
  };
}

/** A command as sent: a start_output's order built now (its URL and key unsealed), or nothing once it is moot. */
async function commandMessage(ctx: RestreamContext, command: PendingCommand): Promise<WorkerCommand | undefined> {
  if (command.kind !== "start_output")
    return create(WorkerCommandSchema, {
      seq: command.seq,
      kind: command.kind,
      sessionId: command.sessionId,
      reason: command.reason,
      outputId: command.outputId,
    });
  const output = await orderFor(ctx, ctx.orm.em.fork(), command.outputId);
  if (!output) return undefined;
  return create(WorkerCommandSchema, { seq: command.seq, kind: command.kind, sessionId: command.sessionId, output });
}

/** A message's fields as a plain object to store (without protobuf-es's `$typeName`). */
function withoutType(message: object): Record<string, unknown> {
  const { $typeName: _, ...fields } = message as Record<string, unknown>;
  return fields;
}
