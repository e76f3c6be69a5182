import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { ChannelReadResultSchema, ChannelSchema } from "../../../gen/pf/live/v1/channels_pb.js";
import type { LiveService } from "../../../gen/pf/live/v1/live_pb.js";
import { actingPerson } from "../../kit/auth/principal.js";
import { refreshSearchDocuments } from "../../kit/search-documents/record.js";
import type { LiveContext } from "../context.js";
import { requireChannel, setBio, type ChannelSelectRow } from "../db/channels.js";
import { recordingsOf, slotsOf } from "../db/listings.js";
import { channelDocumentIds, channelDocuments } from "../db/search.js";
import { clipOf, slotOf, streamOf, timeOf, vodOf } from "../db/rows.js";
import { liveStreamsOf } from "../db/streams.js";
import { viewOfCall } from "../readers.js";

type ChannelHandlers = Pick<
  ServiceImpl<typeof LiveService>,
  "getChannelOwner" | "getChannel" | "getChannelBio" | "listChannelClips" | "updateChannel"
>;

/** Listings a channel page shows of each kind. */
const PAGE_ITEMS = 50;

/** The channel reads (anyone; the owner and staff also see private listings) and the owner's bio. */
export function channelHandlers(ctx: LiveContext): ChannelHandlers {
  const since = () => new Date(ctx.clock.now().getTime() - ctx.settings.viewerWindowMs);
  /** The profile part of a channel: display fields, bio, follower count, whether live. */
  const profile = (row: ChannelSelectRow, call: HandlerContext, parts: MessageInitShape<typeof ChannelSchema> = {}) =>
    create(ChannelReadResultSchema, {
      channel: create(ChannelSchema, {
        username: row.username,
        displayName: row.display_name,
        avatarUrl: row.avatar_url,
        bioEn: row.bio_en,
        followerCount: 0,
        live: row.live,
        view: viewOfCall(call, row.owner),
        lastLiveAt: timeOf(row.last_live_at),
        ...parts,
      }),
    });
  const clipsOf = async (row: ChannelSelectRow, privateToo: boolean) =>
    (await recordingsOf(ctx, row.owner, "clip", privateToo, PAGE_ITEMS)).map(clipOf);
  return {
    async getChannelOwner(request, call) {
      return profile(await requireChannel(ctx, request.username), call);
    },

    async getChannel(request, call) {
      const row = await requireChannel(ctx, request.username);
      const privateToo = viewOfCall(call, row.owner) !== "public";
      const [streams, slots, vods, clips] = await Promise.all([
        liveStreamsOf(ctx, row.owner, since(), privateToo),
        slotsOf(ctx, row.owner, ctx.clock.now(), privateToo),
        recordingsOf(ctx, row.owner, "vod", privateToo, PAGE_ITEMS),
        clipsOf(row, privateToo),
      ]);
      return profile(row, call, {
        streams: streams.map(streamOf),
        slots: slots.map(slotOf),
        vods: vods.map(vodOf),
        clips,
      });
    },

    async getChannelBio(request, call) {
      const row = await requireChannel(ctx, request.username);
      return create(ChannelReadResultSchema, {
        channel: { username: row.username, bioEn: row.bio_en, view: viewOfCall(call, row.owner) },
      });
    },

    async listChannelClips(request, call) {
      const row = await requireChannel(ctx, request.username);
      const view = viewOfCall(call, row.owner);
      return create(ChannelReadResultSchema, {
        channel: { username: row.username, clips: await clipsOf(row, view !== "public"), view },
      });
    },

    async updateChannel(request, call) {
      const row = await requireChannel(ctx, request.username, actingPerson(call));
      if (request.bioEn !== undefined) {
        const bio = request.bioEn;
        await ctx.transaction(async (em) => {
          await setBio(em, row.owner, bio, ctx.clock.now());
          await refreshSearchDocuments(em, channelDocuments, await channelDocumentIds(em, row.owner), ctx.clock.now());
        });
      }
      return profile({ ...row, bio_en: request.bioEn ?? row.bio_en }, call);
    },
  };
}
