import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import { PlaybackDescriptorSchema } from "../../../gen/pf/restream/v1/events_pb.js";
import type { RestreamService } from "../../../gen/pf/restream/v1/restream_pb.js";
import { SessionEndResultSchema, SessionReadResultSchema } from "../../../gen/pf/restream/v1/sessions_pb.js";
import { pageBefore, pageLimit } from "../../kit/handler/paging.js";
import type { RestreamContext } from "../context.js";
import type { SessionRow } from "../db/entities.js";
import { sessionWithin, sessionsWithin, sessionViews } from "../db/sessions.js";
import { workerViews } from "../db/workers.js";
import { isOpen, playbackNow, type Playback } from "../domain/sessions.js";
import { reachOf } from "../owners.js";
import { closeSession } from "../sessions.js";

type SessionHandlers = Pick<
  ServiceImpl<typeof RestreamService>,
  "listSessions" | "getSession" | "endSession" | "getPlayback" | "listWorkers"
>;

/** Sessions, their playback descriptors, and the workers. */
export function sessionHandlers(ctx: RestreamContext): SessionHandlers {
  const view = async (em: EntityManager, row: SessionRow) => (await sessionViews(em, [row]))[0]!;

  return {
    /** The sessions of the streams within reach, newest first, by stream and state (`open`: starting or live). */
    async listSessions(request, call) {
      const reach = reachOf(call);
      const limit = pageLimit(request.limit);
      if (reach === "none") return create(SessionReadResultSchema, {});
      const em = ctx.orm.em.fork();
      const rows = await sessionsWithin(em, reach, {
        streamId: request.streamId,
        state: request.state,
        before: request.before,
        limit,
      });
      const { items, nextBefore } = pageBefore(rows, limit);
      return create(SessionReadResultSchema, { sessions: await sessionViews(em, items), nextBefore });
    },

    async getSession(request, call) {
      const em = ctx.orm.em.fork();
      const row = await sessionWithin(em, request.id, reachOf(call));
      return create(SessionReadResultSchema, { session: await view(em, row) });
    },

    /**
     * Ends an open session at once (reason `ended`), its outputs stopped, and tells the worker generation holding it
     * to disconnect the encoder. A session already over answers as it is, changed false.
     */
    async endSession(request, call) {
      const reach = reachOf(call);
      return ctx.transaction(async (em) => {
        const row = await sessionWithin(em, request.id, reach, true);
        if (!isOpen(row.state)) return create(SessionEndResultSchema, { session: await view(em, row), changed: false });
        await closeSession(ctx, em, row, { state: "ended", reason: "ended", at: ctx.clock.now(), tellWorker: true });
        return create(SessionEndResultSchema, { session: await view(em, row), changed: true });
      });
    },

    /** The session's playback descriptor while it is live; protocol none with the reason before and after. */
    async getPlayback(request, call) {
      const em = ctx.orm.em.fork();
      const row = await sessionWithin(em, request.id, reachOf(call));
      const playback = playbackNow(row.state, row.playback as Playback | null);
      return create(SessionReadResultSchema, { playback: create(PlaybackDescriptorSchema, playback) });
    },

    /** Every worker with its generation, state and the sessions it holds open (services and apps only). */
    async listWorkers() {
      return create(SessionReadResultSchema, { workers: await workerViews(ctx.orm.em.fork()) });
    },
  };
}
