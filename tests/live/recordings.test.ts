import { describe, expect, it } from "vitest";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { usePlatform } from "../support/platform.js";
import { until } from "../support/until.js";
import { liveChannel, session } from "./support.js";

// Its own database: the hero falls back to recordings only while nothing is live, which this file controls.
const clock = new ManualClock(new Date("2030-08-01T12:00:00Z"));
const t = usePlatform({ services: ["live"], clock, env: { PF_LIVE_ANONYMOUS_READS_PER_MINUTE: "100000" } });
const get = async (path: string, token?: string) => (await t.http("GET", `/live${path}`, { token })).body;
const register = async (kind: "vods" | "clips", id: string, streamId: string, listing: string, title = id) => {
  const token = await t.token({ kind: "service", svc: "media", caps: ["live.stream.write"] });
  clock.advance(1000); // each registered later than the one before
  return t.http("PUT", `/live/api/${kind}/${id}`, {
    token,
    body: { stream_id: streamId, title, url: "https://cdn.example/r.mp4", listing },
  });
};
const ids = (items: { vod?: { id: string }; clip?: { id: string } }[]) =>
  items.map((item) => item.vod?.id ?? item.clip?.id);

/** A channel whose stream went live and ended. */
async function endedChannel() {
  const channel = await liveChannel(t, clock.now());
  await session(t, "ended", { sessionId: channel.sessionId, owner: channel.owner, at: clock.now() });
  await until(async () => (await get(`/api/streams/${channel.streamId}`)).stream.state === "ended");
  return channel;
}

describe("live recordings", () => {
  it("never shows a private VOD in discovery, the hero or the ended streams; its owner sees it", async () => {
    const channel = await liveChannel(t, clock.now());
    const [pub, priv] = [`pub-${channel.username}`, `priv-${channel.username}`];
    expect((await register("vods", pub, channel.streamId, "public")).status).toBe(201);
    expect((await register("vods", priv, channel.streamId, "private")).status).toBe(201);
    const publicReads = [
      "/api/content/feed?limit=50",
      "/api/home/discover?limit=50",
      "/api/home/featured?limit=50",
      "/api/home/hero",
      "/api/home/pulse?limit=50",
      "/api/live-events",
      "/api/streams?limit=200",
      `/api/streams/${channel.streamId}`,
      `/api/streams/channel/${channel.username}`,
    ];
    const live = JSON.stringify(await Promise.all(publicReads.map((path) => get(path))));
    expect(live).toContain(pub);
    expect(live).not.toContain(priv);

    await session(t, "ended", { sessionId: channel.sessionId, owner: channel.owner, at: clock.now() });
    await until(async () => (await get(`/api/streams/${channel.streamId}`)).stream.state === "ended");
    const ended = (await get("/api/streams?state=ended&limit=200")).streams as { id: string; vod?: { id: string } }[];
    expect(ended.find((stream) => stream.id === channel.streamId)?.vod?.id).toBe(pub);
    // Nothing is live: the hero is the newest public recording, never the newer private one.
    expect(ids((await get("/api/home/hero")).items)).toEqual([pub]);
    const after = JSON.stringify(await Promise.all([...publicReads, "/api/streams?state=ended"].map((p) => get(p))));
    expect(after).not.toContain(priv);

    const owner = await t.token({ kind: "user", sub: channel.owner });
    expect((await get(`/api/streams/${channel.streamId}`, owner)).stream.vod.id).toBe(priv);
    const vods = (await get(`/api/streams/channel/${channel.username}`, owner)).channel.vods as { id: string }[];
    expect(vods.map((vod) => vod.id)).toEqual([priv, pub]);
  });

  it("makes the newest public VOD or clip the hero while nothing is live", async () => {
    const channel = await endedChannel();
    const hero = async () => ids((await get("/api/home/hero")).items);
    await register("vods", `vod1-${channel.username}`, channel.streamId, "public");
    expect(await hero()).toEqual([`vod1-${channel.username}`]);
    await register("clips", `clip1-${channel.username}`, channel.streamId, "public");
    expect(await hero()).toEqual([`clip1-${channel.username}`]);
    await register("clips", `clip2-${channel.username}`, channel.streamId, "private");
    expect(await hero()).toEqual([`clip1-${channel.username}`]);
    await register("vods", `vod2-${channel.username}`, channel.streamId, "public");
    expect(await hero()).toEqual([`vod2-${channel.username}`]);
  });

  it("answers 409 to a VOD or clip id held for another stream, and leaves it as it was", async () => {
    const [mine, theirs] = [await endedChannel(), await endedChannel()];
    const [vod, clip] = [`vod-${mine.username}`, `clip-${mine.username}`];
    expect((await register("vods", vod, mine.streamId, "public", "First")).status).toBe(201);
    expect((await register("vods", vod, mine.streamId, "public", "Renamed")).status).toBe(200);
    const taken = await register("vods", vod, theirs.streamId, "public", "Taken");
    expect([taken.status, taken.body.code]).toEqual([409, "vod.id_taken"]);
    expect((await register("clips", clip, mine.streamId, "public")).status).toBe(201);
    const clipTaken = await register("clips", clip, theirs.streamId, "public", "Taken");
    expect([clipTaken.status, clipTaken.body.code]).toEqual([409, "clip.id_taken"]);

    // Another stream of the same owner cannot take it either.
    const second = `rss_second${mine.owner.slice(4)}`;
    await session(t, "started", { sessionId: second, owner: mine.owner, at: clock.now() });
    let secondStream = "";
    await until(async () => {
      secondStream = (await get(`/api/streams/channel/${mine.username}`)).channel.streams[0]?.id ?? "";
      return secondStream !== "";
    });
    const sameOwner = await register("vods", vod, secondStream, "public", "Taken");
    expect([sameOwner.status, sameOwner.body.code]).toEqual([409, "vod.id_taken"]);

    const page = async (who: { username: string }) => (await get(`/api/streams/channel/${who.username}`)).channel;
    expect((await page(mine)).vods).toMatchObject([{ id: vod, stream_id: mine.streamId, title: "Renamed" }]);
    expect((await page(mine)).clips).toMatchObject([{ id: clip, stream_id: mine.streamId }]);
    expect([(await page(theirs)).vods, (await page(theirs)).clips]).toEqual([[], []]);
  });
});
