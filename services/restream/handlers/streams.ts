import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { RestreamService } from "../../../gen/pf/restream/v1/restream_pb.js";
import { StreamReadResultSchema, StreamWriteResultSchema } from "../../../gen/pf/restream/v1/streams_pb.js";
import { actingPerson } from "../../kit/auth/principal.js";
import { newId } from "../../kit/handler/ids.js";
import { pageBefore, pageLimit } from "../../kit/handler/paging.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import { newSecret, secretHash } from "../../kit/auth/secrets.js";
import type { RestreamContext } from "../context.js";
import type { StreamRow } from "../db/entities.js";
import { insertKey } from "../db/keys.js";
import { openSessionOf } from "../db/sessions.js";
import {
  insertStream,
  ownStream,
  saveStream,
  streamsWithin,
  streamViews,
  streamWithin,
  writableStream,
} from "../db/streams.js";
import { ingestUrls } from "../db/workers.js";
import { keyHintOf } from "../domain/keys.js";
import { DEFAULT_SETTINGS, refsAfter, settingsAfter } from "../domain/streams.js";
import { recordStreamEvent } from "../events.js";
import { reachOf } from "../owners.js";

type StreamHandlers = Pick<
  ServiceImpl<typeof RestreamService>,
  "createStream" | "listStreams" | "getStream" | "updateStream" | "archiveStream"
>;

/** Stream definitions: create (the ingest key once), list, read, update, archive. */
export function streamHandlers(ctx: RestreamContext): StreamHandlers {
  const views = async (em: EntityManager, rows: StreamRow[]) =>
    streamViews(em, rows, ctx.clock.now(), await ingestUrls(em, ctx.settings));
  const view = async (em: EntityManager, row: StreamRow) => (await views(em, [row]))[0]!;

  return {
    /** A stream owned by the acting person, with its first ingest key answered this once. */
    async createStream(request, call) {
      const owner = actingPerson(call);
      if (request.title === undefined) throw invalid("title", "title is required");
      const settings = settingsAfter(DEFAULT_SETTINGS, request.settings);
      const externalRefs = refsAfter({}, request.externalRefs, true);
      const key = newSecret();
      const stream = await ctx.transaction(async (em) => {
        const at = ctx.clock.now();
        const row = await insertStream(em, {
          id: newId("rst"),
          owner,
          title: request.title!.trim(),
          settings,
          externalRefs,
          at,
        });
        await insertKey(em, { id: newId("rik"), streamId: row.id, keyHash: secretHash(key), hint: keyHintOf(key), at });
        return view(em, row);
      });
      return create(StreamWriteResultSchema, { stream, ingestKey: key });
    },

    /** The streams within the caller's reach, newest first; archived ones only when asked. */
    async listStreams(request, call) {
      const reach = reachOf(call);
      const limit = pageLimit(request.limit);
      if (reach === "none") return create(StreamReadResultSchema, {});
      const em = ctx.orm.em.fork();
      const rows = await streamsWithin(em, reach, {
        includeArchived: request.includeArchived,
        before: request.before,
        limit,
      });
      const { items, nextBefore } = pageBefore(rows, limit);
      return create(StreamReadResultSchema, { streams: await views(em, items), nextBefore });
    },

    async getStream(request, call) {
      const em = ctx.orm.em.fork();
      const row = await streamWithin(em, request.id, reachOf(call));
      return create(StreamReadResultSchema, { stream: await view(em, row) });
    },

    /** Title, settings (field by field) and external references (merged, or replaced); 409 once archived. */
    async updateStream(request, call) {
      const owner = actingPerson(call);
      const stream = await ctx.transaction(async (em) => {
        const row = await writableStream(em, request.id, owner);
        await saveStream(em, row, {
          title: request.title === undefined ? row.title : request.title.trim(),
          settings: settingsAfter(row.settings, request.settings),
          externalRefs: refsAfter(row.externalRefs, request.externalRefs, request.replaceExternalRefs),
          updatedAt: ctx.clock.now(),
        });
        return view(em, row);
      });
      return create(StreamWriteResultSchema, { stream });
    },

    /**
     * Archives under the stream's lock, the one the ingest authorisation takes: refused while a session is open, so
     * no session opens on an archived stream. Archiving again answers it with changed false.
     */
    async archiveStream(request, call) {
      const owner = actingPerson(call);
      const { stream, changed } = await ctx.transaction(async (em) => {
        const row = await ownStream(em, request.id, owner, true);
        if (row.archivedAt) return { stream: await view(em, row), changed: false };
        const open = await openSessionOf(em, row.id);
        if (open)
          throw problem(
            409,
            "restream.session_open",
            `The stream ${row.id} has an open session (${open.id}): end it before archiving the stream.`,
          );
        const at = ctx.clock.now();
        await saveStream(em, row, { archivedAt: at, updatedAt: at });
        await recordStreamEvent(em, "streamArchived", {
          streamId: row.id,
          owner: row.owner,
          at: timestampFromDate(at),
        });
        return { stream: await view(em, row), changed: true };
      });
      return create(StreamWriteResultSchema, { stream, changed });
    },
  };
}
