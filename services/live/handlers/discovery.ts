import { create, type MessageInitShape } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  ChannelCardSchema,
  DigestSchema,
  DiscoveryItemSchema,
  DiscoveryResultSchema,
  HomeStatsSchema,
  MomentSchema,
  type DiscoveryItem,
} from "../../../gen/pf/live/v1/discovery_pb.js";
import type { LiveService } from "../../../gen/pf/live/v1/live_pb.js";
import type { LiveContext } from "../context.js";
import { answerMessage } from "../../kit/feeds/answer.js";
import {
  channelsByUsername,
  channelsLive,
  channelsStartedBetween,
  recentlyLiveChannels,
  type ChannelSelectRow,
} from "../db/channels.js";
import { homeNumbers, momentsFeed, newestCurationUpTo, readCuration } from "../db/discovery.js";
import { publicRecordings, type RecordingWithChannel } from "../db/listings.js";
import { clipOf, streamOf, timeOf, vodOf, type StreamSelectRow } from "../db/rows.js";
import { liveStreams, startedStreams } from "../db/streams.js";
import { dayStartOf, featuredPick, rotationSlot, starOf, utcDay } from "../domain/discovery.js";
import { normalUsername } from "../domain/channels.js";

type DiscoveryHandlers = Pick<
  ServiceImpl<typeof LiveService>,
  | "getContentFeed"
  | "getMoments"
  | "getDigest"
  | "getDiscover"
  | "getFeatured"
  | "getHero"
  | "getPulse"
  | "getStar"
  | "getStatsLive"
>;

const DAY_MS = 86_400_000;
/** "Recently online": went live within this long. */
const RECENT_MS = 7 * DAY_MS;
/** The most channels the star is picked among (the first by username). */
const STAR_CANDIDATES = 1000;

const card = (row: {
  username: string;
  display_name?: string;
  avatar_url?: string;
  live?: boolean;
  last_live_at?: string | null;
}) =>
  create(ChannelCardSchema, {
    username: row.username,
    displayName: row.display_name ?? "",
    avatarUrl: row.avatar_url ?? "",
    live: row.live ?? false,
    lastLiveAt: timeOf(row.last_live_at),
  });

const channelItem = (row: ChannelSelectRow): DiscoveryItem =>
  create(DiscoveryItemSchema, { kind: "channel", channel: card(row), at: timeOf(row.last_live_at) });

const streamItem = (row: StreamSelectRow): DiscoveryItem =>
  create(DiscoveryItemSchema, {
    kind: "stream",
    channel: card({ username: row.username, live: row.state === "live" }),
    stream: streamOf(row),
    at: timeOf(row.started_at),
  });

const recordingItem = (row: RecordingWithChannel): DiscoveryItem =>
  create(DiscoveryItemSchema, {
    kind: row.kind,
    channel: card(row),
    ...(row.kind === "vod" ? { vod: vodOf(row) } : { clip: clipOf(row) }),
    at: timeOf(row.at),
  });

/** The home surfaces and feeds: public items only, the same for every caller, ETag and a short Cache-Control. */
export function discoveryHandlers(ctx: LiveContext): DiscoveryHandlers {
  const { settings } = ctx;
  const since = () => new Date(ctx.clock.now().getTime() - settings.viewerWindowMs);
  const answer = (
    call: Parameters<DiscoveryHandlers["getHero"]>[1],
    result: MessageInitShape<typeof DiscoveryResultSchema>,
  ) =>
    answerMessage(call, DiscoveryResultSchema, create(DiscoveryResultSchema, result), settings.discoveryMaxAgeSeconds);
  /** The featured rotation's channels now: staff's list (or the live channels), moved on every period. */
  const featured = async (count: number): Promise<ChannelSelectRow[]> => {
    const rotation = (await readCuration(ctx, "featured")) as { usernames?: string[]; periodMs?: number } | undefined;
    const listed = rotation?.usernames ?? [];
    const known = new Map((await channelsByUsername(ctx, listed)).map((row) => [row.username, row]));
    const channels = listed.length > 0 ? listed.flatMap((name) => known.get(name) ?? []) : await channelsLive(ctx);
    const slot = rotationSlot(ctx.clock.now(), rotation?.periodMs ?? settings.featuredPeriodMs);
    return featuredPick(channels, slot, count);
  };
  return {
    async getContentFeed(request, call) {
      const rows = await publicRecordings(ctx, request.limit ?? 20);
      return answer(call, { items: rows.map(recordingItem) });
    },

    async getMoments(request, call) {
      const rows = await momentsFeed(ctx, request.limit ?? 20);
      return answer(call, {
        items: rows.map((row) =>
          create(DiscoveryItemSchema, {
            kind: "moment",
            channel: card(row),
            moment: create(MomentSchema, { id: row.id, text: row.text, streamId: row.stream_id, clipId: row.clip_id }),
            at: timeOf(row.at),
          }),
        ),
      });
    },

    async getDigest(_request, call) {
      const body = await newestCurationUpTo(ctx, "digest:", utcDay(ctx.clock.now()));
      return answer(call, { digest: body === undefined ? undefined : create(DigestSchema, body) });
    },

    async getDiscover(request, call) {
      const limit = request.limit ?? 20;
      const except = normalUsername(request.except);
      const [live, recent] = await Promise.all([
        liveStreams(ctx, since(), 0, limit + 1),
        recentlyLiveChannels(ctx, new Date(ctx.clock.now().getTime() - RECENT_MS), limit + 1),
      ]);
      const picks = live.filter((row) => row.username !== "" && row.username !== except).map(streamItem);
      const online = recent.filter((row) => !row.live && row.username !== except).map(channelItem);
      return answer(call, { items: [...picks, ...online].slice(0, limit) });
    },

    async getFeatured(request, call) {
      return answer(call, { items: (await featured(request.limit ?? settings.featuredCount)).map(channelItem) });
    },

    async getHero(_request, call) {
      const [pick] = await featured(1);
      if (pick?.live) return answer(call, { items: [channelItem(pick)] });
      const [top] = await liveStreams(ctx, since(), 0, 1);
      if (top) return answer(call, { items: [streamItem(top)] });
      const [recording] = await publicRecordings(ctx, 1);
      return answer(call, { items: recording ? [recordingItem(recording)] : [] });
    },

    async getPulse(request, call) {
      const rows = await startedStreams(
        ctx,
        since(),
        new Date(ctx.clock.now().getTime() - DAY_MS),
        request.limit ?? 20,
      );
      return answer(call, { items: rows.map(streamItem) });
    },

    async getStar(_request, call) {
      const day = utcDay(ctx.clock.now());
      const pinned = (await readCuration(ctx, `star:${day}`)) as { username?: string } | undefined;
      const [chosen] = pinned?.username ? await channelsByUsername(ctx, [pinned.username]) : [];
      // Channels that went live in the 7 days before the day began: the same set, so the same star, all day.
      const dayStart = dayStartOf(day);
      const eligible = chosen
        ? []
        : await channelsStartedBetween(ctx, new Date(dayStart.getTime() - RECENT_MS), dayStart, STAR_CANDIDATES);
      const star = chosen ?? starOf(day, eligible);
      return answer(call, { items: star ? [channelItem(star)] : [] });
    },

    async getStatsLive(_request, call) {
      const now = ctx.clock.now();
      const numbers = await homeNumbers(ctx, since(), dayStartOf(utcDay(now)));
      return answer(call, {
        stats: create(HomeStatsSchema, {
          liveChannels: numbers.live_channels,
          viewers: numbers.viewers,
          streamsToday: numbers.streams_today,
        }),
      });
    },
  };
}
