import { create } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { ClipWriteResultSchema, SlotWriteResultSchema } from "../../../gen/pf/live/v1/channels_pb.js";
import type { LiveService } from "../../../gen/pf/live/v1/live_pb.js";
import { VodWriteResultSchema } from "../../../gen/pf/live/v1/streams_pb.js";
import { actingPerson } from "../../kit/auth/principal.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import { answerStatus } from "../../kit/handler/status.js";
import type { LiveContext } from "../context.js";
import { requireChannel } from "../db/channels.js";
import { deleteSlot, putRecording, putSlot, readSlot, type RecordingFacts } from "../db/listings.js";
import { clipOf, slotOf, vodOf } from "../db/rows.js";
import { streamOwner } from "../db/streams.js";

type ListingHandlers = Pick<ServiceImpl<typeof LiveService>, "putSlot" | "deleteSlot" | "putVod" | "putClip">;

/** A slot lasts at most a day. */
const SLOT_MAX_MS = 86_400_000;

/** The owner's slots, and VODs and clips registered by the services that make them (designed). */
export function listingHandlers(ctx: LiveContext): ListingHandlers {
  /** Registers a VOD or clip of a stream; answers it as stored, 201 when new. */
  const register = async (call: Parameters<ListingHandlers["putVod"]>[1], facts: Omit<RecordingFacts, "owner">) => {
    const row = await ctx.transaction(async (em) => {
      const owner = await streamOwner(em, facts.streamId);
      if (owner === null) throw problem(404, "stream.not_found", `No stream ${facts.streamId}.`);
      const stored = await putRecording(em, { ...facts, owner }, ctx.clock.now());
      if (!stored)
        throw problem(409, `${facts.kind}.id_taken`, `The ${facts.kind} ${facts.id} is registered for another stream.`);
      return stored;
    });
    if (!row.created) answerStatus(call, 200);
    return row;
  };
  return {
    async putSlot(request, call) {
      const person = actingPerson(call);
      const channel = await requireChannel(ctx, request.username, person);
      const startsAt = timestampDate(request.startsAt!);
      const endsAt = timestampDate(request.endsAt!);
      if (endsAt <= startsAt) throw invalid("ends_at", "ends_at must be after starts_at.");
      if (endsAt.getTime() - startsAt.getTime() > SLOT_MAX_MS)
        throw invalid("ends_at", "A slot lasts at most 24 hours.");
      const created = await ctx.transaction((em) =>
        putSlot(
          em,
          {
            id: request.id,
            owner: channel.owner,
            title: request.title.trim(),
            startsAt,
            endsAt,
            listing: request.listing || "public",
          },
          ctx.clock.now(),
        ),
      );
      // Another owner's slot id answers as a missing channel would: nothing of it shows.
      if (created === null) throw problem(404, "slot.not_found", `No slot ${request.id} on this channel.`);
      if (!created) answerStatus(call, 200);
      return create(SlotWriteResultSchema, { slot: slotOf((await readSlot(ctx, request.id))!) });
    },

    async deleteSlot(request, call) {
      const channel = await requireChannel(ctx, request.username, actingPerson(call));
      await ctx.transaction((em) => deleteSlot(em, channel.owner, request.id));
      return create(SlotWriteResultSchema, {});
    },

    async putVod(request, call) {
      const row = await register(call, {
        kind: "vod",
        id: request.id,
        streamId: request.streamId,
        title: request.title.trim(),
        url: request.url,
        durationSeconds: request.durationSeconds,
        listing: request.listing,
        takenBy: "",
      });
      return create(VodWriteResultSchema, { vod: vodOf(row) });
    },

    async putClip(request, call) {
      const row = await register(call, {
        kind: "clip",
        id: request.id,
        streamId: request.streamId,
        title: request.title.trim(),
        url: request.url,
        durationSeconds: request.durationSeconds,
        listing: request.listing,
        takenBy: request.takenBy,
      });
      return create(ClipWriteResultSchema, { clip: clipOf(row) });
    },
  };
}
