import { describe, expect, it } from "vitest";
import { rollUpStats } from "../../services/live/workers/stats.js";
import type { LiveContext } from "../../services/live/context.js";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { starOf } from "../../services/live/domain/discovery.js";
import { outboxEvents } from "../support/outbox.js";
import { usePlatform } from "../support/platform.js";
import { until } from "../support/until.js";
import { person, session, subjectChanged } from "./support.js";

const clock = new ManualClock(new Date("2030-05-10T10:00:00Z"));
const t = usePlatform({
  services: ["live"],
  clock,
  env: { PF_LIVE_ANONYMOUS_READS_PER_MINUTE: "100000", PF_LIVE_STATS_EVERY_MS: "3600000" },
});
const get = (path: string, headers: Record<string, string> = {}) => t.http("GET", `/live${path}`, { headers });
const staff = () => t.token({ kind: "service", svc: "web", caps: ["live.discovery.manage"] });
const names = (items: { channel: { username: string } }[]) => items.map((item) => item.channel.username);

/** Channels live now (three unless tagged otherwise), in username order. */
async function liveChannels(tags = ["a", "b", "c"]) {
  const channels = tags.map((tag) => person(tag)).sort((x, y) => x.username.localeCompare(y.username));
  for (const who of channels) {
    await subjectChanged(t, who, clock.now());
    await session(t, "started", { sessionId: `rss_${who.owner.slice(4)}`, owner: who.owner, at: clock.now() });
  }
  await until(async () => {
    const answer = await get("/api/streams?limit=200");
    const live = new Set(answer.body.streams.map((s: { username: string }) => s.username));
    return channels.every((who) => live.has(who.username));
  });
  return channels;
}

describe("live discovery", () => {
  it("rotates the featured channels by floor(now / period) and answers 304 to a reader holding the ETag", async () => {
    const channels = await liveChannels();
    const usernames = channels.map((c) => c.username);
    const put = await t.http("PUT", "/live/api/discovery/featured", {
      token: await staff(),
      body: { usernames, period_seconds: 3600 },
    });
    expect(put.status).toBe(200);
    clock.set(new Date(3600_000 * 1_000_000)); // slot 1,000,000: start (1e6 * 1) % 3 = 1
    const first = await get("/api/home/featured?limit=1");
    expect(names(first.body.items)).toEqual([usernames[1]]);
    const etag = first.headers.get("etag")!;
    expect(first.headers.get("cache-control")).toBe("public, max-age=15");
    expect((await get("/api/home/featured?limit=1", { "if-none-match": etag })).status).toBe(304);
    clock.advance(3600_000);
    const next = await get("/api/home/featured?limit=1", { "if-none-match": etag });
    expect(next.status).toBe(200);
    expect(names(next.body.items)).toEqual([usernames[2]]);
  });

  it("picks the star among channels live in the 7 days before the day, the same all day, and staff's pin over it", async () => {
    const day = "2030-07-20";
    clock.set(new Date("2030-07-19T12:00:00Z"));
    const channels = await liveChannels();
    clock.set(new Date(`${day}T01:00:00Z`));
    const morning = names((await get("/api/home/star")).body.items);
    expect(channels.map((c) => c.username)).toContain(morning[0]);
    // Channels going live during the day (after the others by username) are not among them: enough of them that
    // counting them would move the pick onto one of them.
    const more = Array.from({ length: 20 }, (_, i) => i + 1).find((k) => starOf(day, [...Array(3 + k).keys()])! >= 3)!;
    clock.set(new Date(`${day}T10:00:00Z`));
    await liveChannels(Array.from({ length: more }, () => "z"));
    clock.set(new Date(`${day}T23:00:00Z`));
    expect(names((await get("/api/home/star")).body.items)).toEqual(morning);
    const pin = await t.http("PUT", `/live/api/discovery/star/${day}`, {
      token: await staff(),
      body: { username: channels[2].handle },
    });
    expect([pin.status, pin.body.star]).toEqual([200, channels[2].username]);
    expect(names((await get("/api/home/star")).body.items)).toEqual([channels[2].username]);
  });

  it("rolls stats up into buckets and refuses an unknown metric naming it", async () => {
    clock.set(new Date("2030-05-12T10:00:00Z"));
    await liveChannels();
    await rollUpStats(t.platform.contexts.get("live") as LiveContext);
    const series = await get("/api/home/stats/series/live_channels?hours=1");
    expect(series.status).toBe(200);
    expect(series.body.series.bucket_seconds).toBe(300);
    expect(series.body.series.points.at(-1).value).toBeGreaterThanOrEqual(3);
    const bad = await get("/api/home/stats/series/followers");
    expect([bad.status, bad.body.code, bad.body.field]).toEqual([400, "request.invalid", "metric"]);
    const stats = await get("/api/home/stats-live");
    expect(stats.body.stats.live_channels).toBeGreaterThanOrEqual(3);
  });

  it("serves public items only in the feeds, and a live-only pulse", async () => {
    const [channel] = await liveChannels();
    const stream = (await get(`/api/streams/channel/${channel.username}`)).body.channel.streams[0].id;
    const media = await t.token({ kind: "service", svc: "media", caps: ["live.stream.write"] });
    for (const [id, listing] of [
      [`pub-${channel.username}`, "public"],
      [`priv-${channel.username}`, "private"],
    ])
      await t.http("PUT", `/live/api/clips/${id}`, {
        token: media,
        body: { stream_id: stream, title: id, url: "https://cdn.example/c.mp4", listing },
      });
    const feed = JSON.stringify((await get("/api/content/feed?limit=50")).body);
    expect(feed).toContain(`pub-${channel.username}`);
    expect(feed).not.toContain(`priv-${channel.username}`);
    // An ended stream, and a live one of a channel network has not named yet, never reach the pulse.
    const [ended] = await liveChannels(["e"]);
    const endedStream = (await get(`/api/streams/channel/${ended.username}`)).body.channel.streams[0].id;
    await session(t, "ended", { sessionId: `rss_${ended.owner.slice(4)}`, owner: ended.owner, at: clock.now() });
    const unnamed = person("u");
    await session(t, "started", { sessionId: `rss_${unnamed.owner.slice(4)}`, owner: unnamed.owner, at: clock.now() });
    await until(async () => (await get(`/api/streams/${endedStream}`)).body.stream.state === "ended");
    await until(async () => (await outboxEvents(t, "live", unnamed.owner)).length === 1);
    const pulse = (await get("/api/home/pulse?limit=50")).body.items as {
      kind: string;
      channel: { username: string };
      stream: { id: string; state: string };
    }[];
    expect(pulse.every((item) => item.kind === "stream" && item.stream.state === "live")).toBe(true);
    expect(names(pulse)).toContain(channel.username);
    expect(names(pulse)).not.toContain(ended.username);
    expect(names(pulse)).not.toContain("");
  });

  it("answers a repeated AI moment under the same Idempotency-Key with the first one", async () => {
    const [channel] = await liveChannels(["m"]);
    const ai = await t.token({ kind: "service", svc: "ai", caps: ["live.discovery.manage"] });
    const add = (key: string | undefined, text: string) =>
      t.http("POST", "/live/api/discovery/moments", {
        token: ai,
        headers: { "x-pf-origin": "ai", ...(key === undefined ? {} : { "idempotency-key": key }) },
        body: { username: channel.handle, text },
      });
    const key = `moment-${channel.username}`;
    const first = await add(key, "A great save");
    expect(first.status).toBe(201);
    const again = await add(key, "A great save");
    expect([again.status, again.body.moment]).toEqual([201, first.body.moment]);
    const moments = (await get("/api/content/moments?limit=50")).body.items as { moment: { id: string } }[];
    expect(moments.filter((item) => item.moment.id === first.body.moment.id)).toHaveLength(1);
    const other = await add(key, "Another moment");
    expect([other.status, other.body.code]).toEqual([409, "idempotency.mismatch"]);
    const keyless = await add(undefined, "A great save");
    expect([keyless.status, keyless.body.code, keyless.body.field]).toEqual([
      400,
      "request.invalid",
      "Idempotency-Key",
    ]);
  });
});
