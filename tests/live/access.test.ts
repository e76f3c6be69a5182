import { describe, expect, it } from "vitest";
import { LiveService } from "../../gen/pf/live/v1/live_pb.js";
import { Cors, Visibility } from "../../gen/pf/v1/options_pb.js";
import {
  bindingOf,
  describeMalformedInput,
  describeRefusals,
  itWithSpec,
  routesOf,
  type RouteCall,
} from "../support/access.js";
import { usePlatform } from "../support/platform.js";

/** Nobody's channel and stream: a caller let through is answered 404 (channel.not_found, stream.not_found). */
const CHANNEL = "matrix-nobody";
const STREAM = `lvs_${"0".repeat(26)}`;

/** One valid call per route; the refusals vary only the caller. Writes name nothing that exists (404), or nothing. */
const calls: Record<string, RouteCall> = {
  getChannelOwner: { method: "GET", path: `/live/api/auth/user/${CHANNEL}` },
  getChannel: { method: "GET", path: `/live/api/streams/channel/${CHANNEL}` },
  getChannelBio: { method: "GET", path: `/live/api/streams/channel/${CHANNEL}/bio-en` },
  listChannelClips: { method: "GET", path: `/live/api/streams/channel/${CHANNEL}/clips-taken` },
  getContentFeed: { method: "GET", path: "/live/api/content/feed" },
  getMoments: { method: "GET", path: "/live/api/content/moments" },
  getDigest: { method: "GET", path: "/live/api/home/digest" },
  getDiscover: { method: "GET", path: "/live/api/home/discover" },
  getFeatured: { method: "GET", path: "/live/api/home/featured" },
  getHero: { method: "GET", path: "/live/api/home/hero" },
  getPulse: { method: "GET", path: "/live/api/home/pulse" },
  getStar: { method: "GET", path: "/live/api/home/star" },
  getStatsLive: { method: "GET", path: "/live/api/home/stats-live" },
  getStatsSeries: { method: "GET", path: "/live/api/home/stats/series/viewers" },
  getLiveEvents: { method: "GET", path: "/live/api/live-events" },
  listStreams: { method: "GET", path: "/live/api/streams" },
  getStream: { method: "GET", path: `/live/api/streams/${STREAM}` },
  watchStream: { method: "POST", path: `/live/api/streams/${STREAM}/watch`, body: {} },
  updateChannel: { method: "PATCH", path: `/live/api/channels/${CHANNEL}`, body: { bio_en: "hi" } },
  putSlot: {
    method: "PUT",
    path: `/live/api/channels/${CHANNEL}/slots/lsl_matrix`,
    body: { title: "Slot", starts_at: "2030-01-01T10:00:00Z", ends_at: "2030-01-01T11:00:00Z" },
  },
  deleteSlot: { method: "DELETE", path: `/live/api/channels/${CHANNEL}/slots/lsl_matrix` },
  putVod: {
    method: "PUT",
    path: "/live/api/vods/vod-matrix",
    body: { stream_id: STREAM, title: "V", url: "https://cdn.example/v.m3u8", listing: "public" },
  },
  putClip: {
    method: "PUT",
    path: "/live/api/clips/clip-matrix",
    body: { stream_id: STREAM, title: "C", url: "https://cdn.example/c.mp4", listing: "public" },
  },
  // Channels nobody has: 404 channel.not_found, nothing written.
  putFeatured: { method: "PUT", path: "/live/api/discovery/featured", body: { usernames: [CHANNEL] } },
  putStar: { method: "PUT", path: `/live/api/discovery/star/2030-01-01`, body: { username: CHANNEL } },
  addMoment: {
    method: "POST",
    path: "/live/api/discovery/moments",
    headers: { "idempotency-key": "matrix" },
    body: { username: CHANNEL, text: "A moment" },
  },
  putDigest: {
    method: "PUT",
    path: "/live/api/discovery/digest/1999-01-01",
    body: { title: "Old", entries: [{ title: "E", text: "t" }] },
  },
};

const routes = routesOf(LiveService);
const t = usePlatform({ services: ["live"] });

/** The documented reads: public, anonymous, no grant checked. */
const DESIGNED = [
  "updateChannel",
  "putSlot",
  "deleteSlot",
  "putVod",
  "putClip",
  "watchStream",
  "putFeatured",
  "putStar",
  "addMoment",
  "putDigest",
];

describe("live access", () => {
  it("lists one call per route (27)", () => {
    expect(routes).toHaveLength(27);
    expect(Object.keys(calls).sort()).toEqual(routes.map((route) => route.name).sort());
  });

  itWithSpec(
    "matches routes.tsv (every documented route: method, path, capability, visibility)",
    "live",
    (documented) => {
      expect(documented).toHaveLength(17);
      const bound = routes.map(bindingOf);
      for (const [, verb, path, caps, visibility] of documented)
        expect(bound, `${verb} ${path}`).toContainEqual({ verb, template: path, caps, visibility });
    },
  );

  it("serves every documented read to anyone, checking no grant; only /api/live-events is open to every origin", () => {
    const reads = routes.filter((route) => !DESIGNED.includes(route.name));
    expect(reads).toHaveLength(17);
    for (const route of reads) {
      expect(route.rules, route.name).toHaveLength(1);
      expect(route.rule.visibility, route.name).toBe(Visibility.PUBLIC);
      expect(route.rule.anonymous && route.rule.capabilityUnchecked, route.name).toBe(true);
      expect(route.rule.rateLimit, route.name).toBe("read");
      expect(route.rule.cors, route.name).toBe(route.name === "getLiveEvents" ? Cors.OPEN : Cors.UNSPECIFIED);
    }
  });

  it("declares six capabilities: three documented, three designed", () => {
    expect(new Set(routes.flatMap((route) => route.rule.capabilities))).toEqual(
      new Set([
        "live.channel.read",
        "live.discovery.read",
        "live.stream.read",
        "live.channel.write",
        "live.stream.write",
        "live.discovery.manage",
      ]),
    );
  });
});

describeRefusals(t, routes, calls);
describeMalformedInput(t, routes, calls);
