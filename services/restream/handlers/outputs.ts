import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import { OutputReadResultSchema, OutputWriteResultSchema } from "../../../gen/pf/restream/v1/destinations_pb.js";
import type { RestreamService } from "../../../gen/pf/restream/v1/restream_pb.js";
import { actingPerson } from "../../kit/auth/principal.js";
import { newId } from "../../kit/handler/ids.js";
import { problem } from "../../kit/handler/problem.js";
import { issueCommand } from "../commands.js";
import type { RestreamContext } from "../context.js";
import { destinationToProto, destinationWithin, writableDestination } from "../db/destinations.js";
import type { SessionRow } from "../db/entities.js";
import { logsOfDestination, logsOfOutput } from "../db/logs.js";
import {
  insertOutput,
  latestOutput,
  outputsOfSession,
  outputToProto,
  outputWithin,
  runningOutput,
} from "../db/outputs.js";
import { openSessionOf, sessionWithin } from "../db/sessions.js";
import { destinationInvalid } from "../domain/destination-url.js";
import { reachOf } from "../owners.js";
import { announceOutput, changeOutputState, judgeDestination } from "../outputs.js";

type OutputHandlers = Pick<
  ServiceImpl<typeof RestreamService>,
  "startOutput" | "stopOutput" | "listSessionOutputs" | "listDestinationLogs" | "listOutputLogs"
>;

/** Log lines a read answers when it names no limit. */
const DEFAULT_LOG_LIMIT = 100;

/** Outputs of the live session: start, stop, their state and health, their bounded logs. */
export function outputHandlers(ctx: RestreamContext): OutputHandlers {
  return {
    /**
     * Starts the destination's output for the stream's open session: its host resolved and judged public again
     * (outside any transaction), then a `starting` output and a start_output command for the session's worker
     * generation. A running output answers as it is (changed false). A URL changed between the judgement and the
     * lock is 409 restream.destination_changed: never a start on a stale judgement.
     */
    async startOutput(request, call) {
      const owner = actingPerson(call);
      // The refusals first (404, 409), then the lookup, outside any transaction.
      const destination = await ctx.transaction(async (em) => {
        const found = await writableDestination(em, request.id, owner);
        await liveSession(em, found.stream.id);
        return found.destination;
      });
      const judgement = await judgeDestination(ctx, destination.url);
      if (!judgement.ok) throw destinationInvalid(`url cannot be pushed to now: ${judgement.detail}.`);
      return ctx.transaction(async (em) => {
        const { destination: row, stream } = await writableDestination(em, request.id, owner);
        if (row.url !== destination.url)
          throw problem(
            409,
            "restream.destination_changed",
            `The destination ${row.id} changed while its host was judged: start it again.`,
          );
        const session = await liveSession(em, stream.id);
        const running = await runningOutput(em, row.id, session.id, true);
        if (running)
          return create(OutputWriteResultSchema, {
            destination: destinationToProto(row),
            output: outputToProto(running),
            changed: false,
          });
        const at = ctx.clock.now();
        const output = await insertOutput(em, {
          id: newId("rso"),
          destinationId: row.id,
          sessionId: session.id,
          streamId: stream.id,
          state: "starting",
          workerId: session.workerId,
          generation: session.generation,
          startedAt: at,
        });
        await announceOutput(em, output, stream.owner, at);
        await issueCommand(ctx, em, {
          workerId: session.workerId,
          generation: session.generation,
          kind: "start_output",
          sessionId: session.id,
          outputId: output.id,
        });
        return create(OutputWriteResultSchema, {
          destination: destinationToProto(row),
          output: outputToProto(output),
          changed: true,
        });
      });
    },

    /** Stops the destination's running output of the open session (stopped_by_owner); none running: changed false. */
    async stopOutput(request, call) {
      const owner = actingPerson(call);
      return ctx.transaction(async (em) => {
        const { destination, stream } = await writableDestination(em, request.id, owner);
        const session = await liveSession(em, stream.id);
        const running = await runningOutput(em, destination.id, session.id, true);
        if (!running) {
          const latest = await latestOutput(em, destination.id, session.id);
          return create(OutputWriteResultSchema, {
            destination: destinationToProto(destination),
            output: latest ? outputToProto(latest) : undefined,
            changed: false,
          });
        }
        await changeOutputState(em, running, stream.owner, {
          state: "stopped",
          reason: "stopped_by_owner",
          at: ctx.clock.now(),
        });
        await issueCommand(ctx, em, {
          workerId: running.workerId,
          generation: running.generation,
          kind: "stop_output",
          sessionId: session.id,
          outputId: running.id,
        });
        return create(OutputWriteResultSchema, {
          destination: destinationToProto(destination),
          output: outputToProto(running),
          changed: true,
        });
      });
    },

    async listSessionOutputs(request, call) {
      const em = ctx.orm.em.fork();
      const session = await sessionWithin(em, request.id, reachOf(call));
      const rows = await outputsOfSession(em, session.id);
      return create(OutputReadResultSchema, { outputs: rows.map(outputToProto) });
    },

    /** The last lines of all the destination's outputs, oldest first. */
    async listDestinationLogs(request, call) {
      const em = ctx.orm.em.fork();
      const { destination } = await destinationWithin(em, request.id, reachOf(call));
      const logs = await logsOfDestination(em, destination.id, request.limit ?? DEFAULT_LOG_LIMIT);
      return create(OutputReadResultSchema, { logs });
    },

    async listOutputLogs(request, call) {
      const em = ctx.orm.em.fork();
      const output = await outputWithin(em, request.id, reachOf(call));
      const logs = await logsOfOutput(em, output.id, request.limit ?? DEFAULT_LOG_LIMIT);
      return create(OutputReadResultSchema, { logs });
    },
  };
}

/** The stream's open session (the one its outputs push), else 409 restream.no_live_session. */
async function liveSession(em: EntityManager, streamId: string): Promise<SessionRow> {
  const session = await openSessionOf(em, streamId);
  if (!session) throw problem(409, "restream.no_live_session", `The stream ${streamId} has no live session.`);
  return session;
}
