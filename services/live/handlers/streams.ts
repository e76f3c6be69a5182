import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { LiveService } from "../../../gen/pf/live/v1/live_pb.js";
import { StreamReadResultSchema, UpcomingSlotSchema } from "../../../gen/pf/live/v1/streams_pb.js";
import { decodeCursor, decodeTimeCursor, encodeCursor, pageLimit } from "../../kit/handler/paging.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import type { LiveContext } from "../context.js";
import { upcomingSlots } from "../db/listings.js";
import { streamOf, timeOf } from "../db/rows.js";
import { endedStreams, liveStreams, readStream } from "../db/streams.js";
import { viewerKey, viewOfCall } from "../readers.js";

type StreamHandlers = Pick<
  ServiceImpl<typeof LiveService>,
  "listStreams" | "getStream" | "getLiveEvents" | "watchStream"
>;

/** How far ahead /api/live-events lists slots. */
const UPCOMING_MS = 24 * 3600_000;

/** Who is live, recently ended streams, one stream (a read of a live one counts its viewer), the embed feed. */
export function streamHandlers(ctx: LiveContext): StreamHandlers {
  const since = () => new Date(ctx.clock.now().getTime() - ctx.settings.viewerWindowMs);
  const offsetOf = (cursor: string): number => {
    const [offset] = decodeCursor(cursor) ?? [0];
    if (typeof offset !== "number" || !Number.isInteger(offset) || offset < 0)
      throw invalid("cursor", "cursor is not one this service issued");
    return offset;
  };
  /** One stream as the caller may see it; a live one's reader is counted as a viewer. */
  const watched = async (id: string, call: Parameters<StreamHandlers["getStream"]>[1]) => {
    const first = await readStream(ctx, id, since(), false);
    if (!first) throw problem(404, "stream.not_found", `No stream ${id}.`);
    const row = viewOfCall(call, first.owner) === "public" ? first : await readStream(ctx, id, since(), true);
    if (row.state === "live") ctx.viewers.see(row.id, viewerKey(ctx.clientKeys, call), ctx.clock.now());
    return create(StreamReadResultSchema, { stream: streamOf(row) });
  };
  return {
    async listStreams(request) {
      const limit = pageLimit(request.limit);
      if (request.state === "ended") {
        const before = decodeTimeCursor(request.cursor) ?? { at: new Date(8.64e15), id: "" };
        const rows = await endedStreams(ctx, since(), before, limit + 1);
        const items = rows.slice(0, limit);
        const last = items[items.length - 1];
        return create(StreamReadResultSchema, {
          streams: items.map(streamOf),
          nextCursor: rows.length > limit ? encodeCursor([new Date(last.ended_at!).toISOString(), last.id]) : "",
        });
      }
      const offset = offsetOf(request.cursor);
      const rows = await liveStreams(ctx, since(), offset, limit + 1);
      return create(StreamReadResultSchema, {
        streams: rows.slice(0, limit).map(streamOf),
        nextCursor: rows.length > limit ? encodeCursor([offset + limit]) : "",
      });
    },

    async getStream(request, call) {
      return watched(request.id, call);
    },

    async watchStream(request, call) {
      return watched(request.id, call);
    },

    async getLiveEvents(request) {
      const limit = request.limit ?? 20;
      const now = ctx.clock.now();
      const [streams, slots] = await Promise.all([
        liveStreams(ctx, since(), 0, limit),
        upcomingSlots(ctx, now, new Date(now.getTime() + UPCOMING_MS), limit),
      ]);
      return create(StreamReadResultSchema, {
        streams: streams.map(streamOf),
        upcoming: slots.map((slot) =>
          create(UpcomingSlotSchema, {
            username: slot.username,
            slotId: slot.id,
            title: slot.title,
            startsAt: timeOf(slot.starts_at),
            endsAt: timeOf(slot.ends_at),
          }),
        ),
      });
    },
  };
}
