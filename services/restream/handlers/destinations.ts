import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { connect } from "node:net";
import {
  DestinationTestSchema,
  OutputReadResultSchema,
  OutputWriteResultSchema,
  type OutputWriteRequest,
} from "../../../gen/pf/restream/v1/destinations_pb.js";
import type { RestreamService } from "../../../gen/pf/restream/v1/restream_pb.js";
import { actingPerson } from "../../kit/auth/principal.js";
import { newId } from "../../kit/handler/ids.js";
import { invalid } from "../../kit/handler/problem.js";
import { issueCommand } from "../commands.js";
import type { RestreamContext } from "../context.js";
import {
  destinationsOfStream,
  destinationToProto,
  insertDestination,
  saveDestinations,
  writableDestination,
} from "../db/destinations.js";
import { runningOutputsOf } from "../db/outputs.js";
import { writableStream, streamWithin } from "../db/streams.js";
import { checkDestinationUrl, keyHint, schemeOf, type DestinationScheme } from "../domain/destination-url.js";
import { reachOf } from "../owners.js";
import { changeOutputState, judgeDestination } from "../outputs.js";

type DestinationHandlers = Pick<
  ServiceImpl<typeof RestreamService>,
  "listDestinations" | "createDestination" | "updateDestination" | "deleteDestination" | "testDestination"
>;

/** Destinations: public-host URLs and write-only sealed stream keys; the connection test. */
export function destinationHandlers(ctx: RestreamContext): DestinationHandlers {
  const seal = (secret: string) => (secret === "" ? "" : ctx.sealer.seal(secret));
  const checked = (url: string) => checkDestinationUrl(url.trim(), ctx.outbound.allowHosts);

  return {
    async listDestinations(request, call) {
      const em = ctx.orm.em.fork();
      const stream = await streamWithin(em, request.id, reachOf(call));
      const rows = await destinationsOfStream(em, stream.id);
      return create(OutputReadResultSchema, { destinations: rows.map(destinationToProto) });
    },

    /** A destination of the acting person's stream: its URL checked, its key and srt passphrase sealed. */
    async createDestination(request, call) {
      const owner = actingPerson(call);
      if (request.url === undefined) throw invalid("url", "url is required.");
      const target = checked(request.url);
      passphraseFits(target.scheme, request);
      const key = request.streamKey ?? "";
      return ctx.transaction(async (em) => {
        const stream = await writableStream(em, request.id, owner);
        const at = ctx.clock.now();
        const row = await insertDestination(em, {
          id: newId("rsd"),
          streamId: stream.id,
          name: request.name?.trim() ?? target.host,
          url: target.url,
          streamKeySealed: seal(key),
          streamKeyHint: keyHint(key),
          passphraseSealed: seal(request.passphrase ?? ""),
          enabled: request.enabled ?? true,
          lastTest: null,
          createdAt: at,
          updatedAt: at,
          deletedAt: null,
        });
        return create(OutputWriteResultSchema, { destination: destinationToProto(row), changed: true });
      });
    },

    /** Changes what is sent: a URL checked again, a key replacing the stored one (a key left out is kept). */
    async updateDestination(request, call) {
      const owner = actingPerson(call);
      const target = request.url === undefined ? undefined : checked(request.url);
      return ctx.transaction(async (em) => {
        const { destination } = await writableDestination(em, request.id, owner);
        const scheme = target?.scheme ?? schemeOf(destination.url);
        passphraseFits(scheme, request);
        if (request.name !== undefined) destination.name = request.name.trim();
        if (target) destination.url = target.url;
        if (request.streamKey !== undefined) {
          destination.streamKeySealed = seal(request.streamKey);
          destination.streamKeyHint = keyHint(request.streamKey);
        }
        if (request.passphrase !== undefined) destination.passphraseSealed = seal(request.passphrase);
        // Only srt carries a passphrase: one left from an srt URL goes with it.
        if (scheme !== "srt") destination.passphraseSealed = "";
        if (request.enabled !== undefined) destination.enabled = request.enabled;
        destination.updatedAt = ctx.clock.now();
        await saveDestinations(em);
        return create(OutputWriteResultSchema, { destination: destinationToProto(destination), changed: true });
      });
    },

    /** Deletes a destination, its running output stopped first (the worker told to stop pushing it). */
    async deleteDestination(request, call) {
      const owner = actingPerson(call);
      return ctx.transaction(async (em) => {
        const { destination, stream } = await writableDestination(em, request.id, owner);
        const at = ctx.clock.now();
        for (const output of await runningOutputsOf(em, { destinationId: destination.id })) {
          await changeOutputState(em, output, stream.owner, { state: "stopped", reason: "destination_deleted", at });
          await issueCommand(ctx, em, {
            workerId: output.workerId,
            generation: output.generation,
            kind: "stop_output",
            sessionId: output.sessionId,
            outputId: output.id,
          });
        }
        destination.deletedAt = at;
        destination.updatedAt = at;
        await saveDestinations(em);
        return create(OutputWriteResultSchema, { destination: destinationToProto(destination), changed: true });
      });
    },

    /**
     * Resolves the host and judges every address (refused: no connection at all), then opens a TCP connection to the
     * first address (never the name again: DNS cannot rebind between) within PF_RESTREAM_TEST_TIMEOUT_MS. srt runs
     * over UDP: its test stops once the host is judged. The outcome is kept as the destination's last_test.
     */
    async testDestination(request, call) {
      const owner = actingPerson(call);
      // The refusals first (404, 409), then the lookup and the connection, outside any transaction.
      const { destination } = await ctx.transaction((em) => writableDestination(em, request.id, owner));
      const judgement = await judgeDestination(ctx, destination.url);
      const outcome = !judgement.ok
        ? { ok: false, reason: `${judgement.failure}: ${judgement.detail}` }
        : schemeOf(destination.url) === "srt"
          ? { ok: true, reason: "" }
          : await connectWithin(judgement.address, judgement.port, ctx.settings.testTimeoutMs);
      return ctx.transaction(async (em) => {
        const { destination: row } = await writableDestination(em, request.id, owner);
        const at = ctx.clock.now();
        row.lastTest = { ...outcome, at: at.toISOString() };
        await saveDestinations(em);
        const test = create(DestinationTestSchema, { ...outcome, at: timestampFromDate(at) });
        return create(OutputWriteResultSchema, { destination: destinationToProto(row), test });
      });
    },
  };
}

/** A passphrase only for an srt destination (400 request.invalid naming passphrase otherwise). */
function passphraseFits(scheme: DestinationScheme, request: OutputWriteRequest): void {
  if (request.passphrase !== undefined && scheme !== "srt")
    throw invalid("passphrase", "Only an srt destination takes a passphrase.");
}

/** A TCP connection to the address, closed at once: `connect: <code>` or `timeout: …` when none is made in time. */
function connectWithin(address: string, port: number, ms: number): Promise<{ ok: boolean; reason: string }> {
  return new Promise((resolve) => {
    const socket = connect({ host: address, port });
    const done = (outcome: { ok: boolean; reason: string }) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(() => done({ ok: false, reason: `timeout: no connection within ${ms} ms` }), ms);
    socket.once("connect", () => done({ ok: true, reason: "" }));
    socket.once("error", (error: NodeJS.ErrnoException) =>
      done({ ok: false, reason: `connect: ${error.code ?? "the connection failed"}` }),
    );
  });
}
