import { describe, expect, it } from "vitest";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { outboxEvents } from "../support/outbox.js";
import { usePlatform } from "../support/platform.js";
import { until } from "../support/until.js";
import { liveChannel as liveChannelOf, person, session, subjectChanged } from "./support.js";

const clock = new ManualClock(new Date("2030-03-01T12:00:00Z"));
const t = usePlatform({
  services: ["live"],
  clock,
  env: { PF_LIVE_VIEWERS_FLUSH_MS: "50", PF_LIVE_ANONYMOUS_READS_PER_MINUTE: "100000" },
});

/** Secrets a stream's external refs carry upstream: none may reach any answer. */
const SECRETS = {
  ingest_key: "sk_live_INGESTSECRET42",
  stream_key: "STREAMKEYSECRET99",
  archive: "https://home.example/ARCHIVESECRET.flv",
};

const get = (path: string, headers: Record<string, string> = {}, token?: string) =>
  t.http("GET", `/live${path}`, { headers, token });

/** A channel with a live stream whose session carries the secrets. */
const liveChannel = () => liveChannelOf(t, clock.now(), SECRETS);

describe("live channels fed by restream and network events", () => {
  it("reads a channel by username, case-insensitively, with its live stream's playback endpoint", async () => {
    const channel = await liveChannel();
    const answer = await get(`/api/streams/channel/${channel.handle.toUpperCase()}`);
    expect(answer.status).toBe(200);
    expect(answer.body.channel).toMatchObject({
      username: channel.username,
      display_name: "Streamer",
      live: true,
      view: "public",
    });
    expect(answer.body.channel.streams[0]).toMatchObject({
      state: "live",
      playback: { protocol: "hls", url: `https://play.example/${channel.sessionId}.m3u8` },
      cameras: [{ name: "main", video_codec: "h264", width: 1280, height: 720 }],
    });
    const stream = await get(`/api/streams/${channel.streamId}`);
    expect(stream.body.stream).toMatchObject({ id: channel.streamId, username: channel.username, state: "live" });
  });

  it("answers 404 channel.not_found for an unknown username and stream.not_found for an unknown stream", async () => {
    const missing = await get("/api/streams/channel/nobody-here");
    expect([missing.status, missing.body.code]).toEqual([404, "channel.not_found"]);
    const stream = await get(`/api/streams/lvs_${"1".repeat(26)}`);
    expect([stream.status, stream.body.code]).toEqual([404, "stream.not_found"]);
    const bad = await get("/api/streams/channel");
    expect([bad.status, bad.body.code, bad.body.field]).toEqual([400, "request.invalid", "id"]);
  });

  it("ends a stream on ended, and an ended event arriving before its start never leaves it live", async () => {
    const channel = await liveChannel();
    await session(t, "ended", { sessionId: channel.sessionId, owner: channel.owner, at: clock.now() });
    await until(async () => (await get(`/api/streams/${channel.streamId}`)).body.stream.state === "ended");
    const ended = (await get(`/api/streams/${channel.streamId}`)).body.stream;
    expect(ended.playback).toEqual({ protocol: "none", url: "" });

    const late = person();
    await subjectChanged(t, late, clock.now());
    const sessionId = `rss_late${late.owner.slice(4)}`;
    await session(t, "interrupted", { sessionId, owner: late.owner, at: clock.now() });
    await session(t, "started", { sessionId, owner: late.owner, at: clock.now() });
    // The started consumer applies events in order: once a later session's start shows, the late start was applied.
    const marker = await liveChannel();
    expect(marker.streamId).not.toBe("");
    const channel2 = await get(`/api/streams/channel/${late.username}`);
    expect(channel2.body.channel.live).toBe(false);
    expect(channel2.body.channel.streams).toEqual([]);
  });

  it("names the channel's username in its stream events, and none before network named the owner", async () => {
    // The username as applied when the session event is: network's event first, then the session's.
    const channel = person();
    await subjectChanged(t, channel, clock.now());
    await until(async () => (await get(`/api/auth/user/${channel.username}`)).status === 200);
    const sessionId = `rss_${channel.owner.slice(4)}`;
    const events = async (owner: string) =>
      (await outboxEvents(t, "live", owner)).map((event) => ({
        subject: event.subject,
        ...(JSON.parse(event.payload) as { owner: string; username: string; state: string }),
      }));
    await session(t, "started", { sessionId, owner: channel.owner, at: clock.now() });
    await until(async () => (await events(channel.owner)).length === 1);
    await session(t, "ended", { sessionId, owner: channel.owner, at: clock.now() });
    await until(async () => (await events(channel.owner)).length === 2);
    expect(await events(channel.owner)).toMatchObject([
      { subject: "live.stream.started", owner: channel.owner, username: channel.username, state: "live" },
      { subject: "live.stream.ended", owner: channel.owner, username: channel.username, state: "ended" },
    ]);

    const unnamed = person();
    await session(t, "started", { sessionId: `rss_${unnamed.owner.slice(4)}`, owner: unnamed.owner, at: clock.now() });
    await until(async () => (await events(unnamed.owner)).length === 1);
    expect(await events(unnamed.owner)).toMatchObject([
      { subject: "live.stream.started", owner: unnamed.owner, username: "" },
    ]);
  });

  it("keeps the newest handle: an older network.subject.changed never overwrites it", async () => {
    const who = person();
    await subjectChanged(t, who, new Date("2030-03-01T11:00:00Z"), { displayName: "New" });
    await until(async () => (await get(`/api/auth/user/${who.username}`)).status === 200);
    await subjectChanged(t, { ...who, handle: `${who.handle}_old` }, new Date("2030-03-01T10:00:00Z"), {
      displayName: "Old",
    });
    const marker = person();
    await subjectChanged(t, marker, clock.now());
    await until(async () => (await get(`/api/auth/user/${marker.username}`)).status === 200);
    const answer = await get(`/api/auth/user/${who.username}`);
    expect(answer.body.channel.display_name).toBe("New");
    expect((await get(`/api/auth/user/${who.username}_old`)).status).toBe(404);
  });

  it("shows private listings to the owner and staff only", async () => {
    const channel = await liveChannel();
    const service = await t.token({ kind: "service", svc: "media", caps: ["live.stream.write"] });
    for (const [id, listing] of [
      ["vod-pub", "public"],
      ["vod-priv", "private"],
    ])
      expect(
        (
          await t.http("PUT", `/live/api/vods/${id}-${channel.username}`, {
            token: service,
            body: { stream_id: channel.streamId, title: id, url: "https://cdn.example/v.m3u8", listing },
          })
        ).status,
      ).toBe(201);
    const owner = await t.token({ kind: "user", sub: channel.owner });
    const stranger = await t.token({ kind: "user", sub: person().owner });
    const vods = async (token?: string, headers: Record<string, string> = {}) =>
      ((await get(`/api/streams/channel/${channel.username}`, headers, token)).body.channel.vods as { title: string }[])
        .map((vod) => vod.title)
        .sort();
    expect(await vods()).toEqual(["vod-pub"]);
    expect(await vods(stranger)).toEqual(["vod-pub"]);
    expect(await vods(owner)).toEqual(["vod-priv", "vod-pub"]);
    const web = await t.token({ kind: "service", svc: "web", caps: [] });
    expect(await vods(web, { "x-pf-subject": channel.owner })).toEqual(["vod-priv", "vod-pub"]);
    expect(await vods(web, { "x-pf-subject": person().owner })).toEqual(["vod-pub"]);
    expect(await vods(web, { "x-pf-subject": person().owner, "x-pf-staff": "1" })).toEqual(["vod-priv", "vod-pub"]);
    const app = await t.token({ kind: "app", app_id: "someapp", caps: [] });
    expect(await vods(app)).toEqual(["vod-pub"]);
  });

  it("lets the owner change their bio; another person's channel is 404", async () => {
    const channel = await liveChannel();
    const owner = await t.token({ kind: "user", sub: channel.owner });
    const stranger = await t.token({ kind: "user", sub: person().owner });
    const patch = (token: string) =>
      t.http("PATCH", `/live/api/channels/${channel.username}`, { token, body: { bio_en: "Hello **there**" } });
    expect((await patch(stranger)).status).toBe(404);
    expect((await patch(owner)).status).toBe(200);
    expect((await get(`/api/streams/channel/${channel.username}/bio-en`)).body.channel.bio_en).toBe("Hello **there**");
  });

  it("counts viewers of a live stream from its playback reads, in memory then flushed", async () => {
    const channel = await liveChannel();
    await get(`/api/streams/${channel.streamId}`);
    await get(`/api/streams/${channel.streamId}`);
    await t.http("GET", `/live/api/streams/${channel.streamId}`, {
      token: await t.token({ kind: "user", sub: person().owner }),
    });
    await until(async () => (await get(`/api/streams/${channel.streamId}`)).body.stream.viewer_count === 2);
    clock.advance(61_000);
    expect((await get(`/api/streams/${channel.streamId}`)).body.stream.viewer_count).toBe(0);
  });

  it("never answers a planted secret on any route", async () => {
    const channel = await liveChannel();
    const bodies: string[] = [];
    for (const path of [
      `/api/auth/user/${channel.username}`,
      `/api/streams/channel/${channel.username}`,
      `/api/streams/channel/${channel.username}/bio-en`,
      `/api/streams/channel/${channel.username}/clips-taken`,
      "/api/content/feed",
      "/api/content/moments",
      "/api/home/digest",
      "/api/home/discover",
      "/api/home/featured",
      "/api/home/hero",
      "/api/home/pulse",
      "/api/home/star",
      "/api/home/stats-live",
      "/api/home/stats/series/viewers",
      "/api/live-events",
      "/api/streams",
      "/api/streams?state=ended",
      `/api/streams/${channel.streamId}`,
    ]) {
      const owner = await t.token({ kind: "user", sub: channel.owner });
      for (const token of [undefined, owner]) {
        const answer = await get(path, {}, token);
        expect(answer.status, path).toBe(200);
        bodies.push(JSON.stringify(answer.body));
      }
    }
    const all = bodies.join("\n");
    expect(all).toContain(channel.streamId);
    for (const secret of [
      ...Object.values(SECRETS),
      "INGESTSECRET",
      "STREAMKEYSECRET",
      "ARCHIVESECRET",
      "archive_download",
    ])
      expect(all).not.toContain(secret);
  });
});

describe("CORS", () => {
  const PLATFORM = "https://app.example";
  const t2 = usePlatform({ services: ["live"], env: { PF_CORS_ORIGINS: PLATFORM } });
  const allowed = async (path: string, origin: string) =>
    (await t2.http("GET", `/live${path}`, { headers: { origin } })).headers.get("access-control-allow-origin");

  it("allows platform origins only on /api paths, and every origin on /api/live-events", async () => {
    expect(await allowed("/api/streams", PLATFORM)).toBe(PLATFORM);
    expect(await allowed("/api/streams", "https://other.example")).toBeNull();
    expect(await allowed("/api/home/featured", "https://other.example")).toBeNull();
    expect(await allowed("/api/live-events", "https://other.example")).toBe("*");
  });
});
