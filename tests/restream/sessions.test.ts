import { describe, expect, it } from "vitest";
import { outboxEvents } from "../support/outbox.js";
import { usePlatform } from "../support/platform.js";
import { until } from "../support/until.js";
import { app, service, streamer } from "./support/streams.js";
import { FakeWorker } from "./support/worker.js";

const t = usePlatform({ services: ["restream"] });

/** A streamer's stream with a session opened on a fresh worker. */
async function openSession(settings: Record<string, unknown> = {}) {
  const owner = await streamer(t);
  const stream = await owner.stream({ settings });
  const worker = await FakeWorker.of(t);
  await worker.register();
  const grant = await worker.authorize(stream.key);
  expect(grant.granted).toBe(true);
  return { owner, stream, worker, sessionId: grant.sessionId };
}

describe("sessions", () => {
  it("reads a session from starting to live: worker, generation, key hint, media, recording and playback", async () => {
    const { owner, stream, worker, sessionId } = await openSession({ recording: true });
    const starting = await owner.call("GET", `/sessions/${sessionId}`);
    expect(starting.body.session).toMatchObject({
      id: sessionId,
      stream_id: stream.id,
      owner: owner.sub,
      state: "starting",
      worker_id: worker.id,
      generation: worker.generation,
      key_hint: stream.key.slice(-4),
      recording: "off",
      playback: { protocol: "none", reason: "the session is not live yet" },
    });
    const before = await owner.call("GET", `/sessions/${sessionId}/playback`);
    expect(before.body.playback).toMatchObject({ protocol: "none" });

    await worker.live(sessionId);
    const live = await owner.call("GET", `/sessions/${sessionId}`);
    expect(live.body.session).toMatchObject({
      state: "live",
      recording: "recording",
      media: { video_codec: "h264", width: 1280, height: 720, fps: 30 },
      playback: { protocol: "flv", url: `http://127.0.0.1:8935/live/${sessionId}.flv` },
    });
    expect(live.body.session.live_at).toBeDefined();
    const playback = await owner.call("GET", `/sessions/${sessionId}/playback`);
    expect(playback.body.playback).toMatchObject({
      protocol: "flv",
      url: `http://127.0.0.1:8935/live/${sessionId}.flv`,
    });
    expect(JSON.stringify(live.body)).not.toContain(stream.key);
  });

  it("ends a session at once (reason ended), tells the generation holding it, and answers an ended one as it is", async () => {
    const { owner, stream, worker, sessionId } = await openSession({ recording: true });
    await worker.live(sessionId);
    const watch = worker.watch();
    try {
      const ended = await owner.call("POST", `/sessions/${sessionId}/end`, {});
      expect(ended.status).toBe(200);
      expect(ended.body).toMatchObject({ changed: true, session: { state: "ended", end_reason: "ended" } });
      expect(ended.body.session.recording).toBe("stopped");
      expect(ended.body.session.ended_at).toBeDefined();
      await until(() => watch.received.length === 1);
      expect(watch.received[0]).toMatchObject({ kind: "end_session", sessionId, reason: "ended" });

      const again = await owner.call("POST", `/sessions/${sessionId}/end`, {});
      expect(again.body.changed ?? false).toBe(false);
      expect(again.body.session).toMatchObject({ state: "ended", end_reason: "ended" });
      const playback = await owner.call("GET", `/sessions/${sessionId}/playback`);
      expect(playback.body.playback).toMatchObject({ protocol: "none", reason: "the session ended" });
      // The stream takes a new session now.
      expect((await worker.authorize(stream.key)).granted).toBe(true);
    } finally {
      watch.stop();
    }
    const events = await outboxEvents(t, "restream", sessionId);
    expect(events.map((e) => e.subject)).toEqual(["restream.session.started", "restream.session.ended"]);
    const payload = JSON.parse(events[1]!.payload);
    expect(payload).toMatchObject({
      session_id: sessionId,
      stream_id: stream.id,
      owner: owner.sub,
      title: "Evening show",
      state: "ended",
      end_reason: "ended",
      playback: { protocol: "none" },
    });
    for (const event of events) expect(event.payload).not.toContain(stream.key);
  });

  it("lists the sessions within reach, newest first, by stream and state (open: starting or live)", async () => {
    const owner = await streamer(t);
    const a = await owner.stream();
    const b = await owner.stream();
    const worker = await FakeWorker.of(t);
    await worker.register();
    const first = (await worker.authorize(a.key)).sessionId;
    await worker.ended(first);
    const second = (await worker.authorize(a.key)).sessionId;
    await worker.live(second);
    const third = (await worker.authorize(b.key)).sessionId;

    const ids = async (query: string, call = owner.call) =>
      ((await call("GET", `/sessions${query}`)).body.sessions ?? []).map((s: { id: string }) => s.id);
    expect(await ids("")).toEqual([third, second, first]);
    expect(await ids(`?stream_id=${a.id}`)).toEqual([second, first]);
    expect(await ids("?state=open")).toEqual([third, second]);
    expect(await ids("?state=live")).toEqual([second]);
    expect(await ids("?state=ended")).toEqual([first]);
    const page = await owner.call("GET", "/sessions?limit=2");
    expect(page.body.next_before).toBe(second);
    expect(await ids(`?before=${second}`)).toEqual([first]);
    expect((await owner.call("GET", "/sessions?state=gone")).body).toMatchObject({ status: 400, field: "state" });

    const other = await streamer(t);
    expect(await ids("", other.call)).toEqual([]);
    expect(await ids("", await app(t))).toEqual([]);
    expect(await ids("?limit=200", await service(t))).toEqual(expect.arrayContaining([first, second, third]));
    expect(await ids("", await service(t, owner.sub))).toEqual([third, second, first]);
  });

  it("answers another owner's session as a missing one (404) on every session route; a service reaches it", async () => {
    const { sessionId } = await openSession();
    const other = await streamer(t);
    for (const [method, path] of [
      ["GET", `/sessions/${sessionId}`],
      ["GET", `/sessions/${sessionId}/playback`],
      ["POST", `/sessions/${sessionId}/end`],
    ] as const) {
      const answer = await other.call(method, path, method === "POST" ? {} : undefined);
      expect(answer.body, path).toMatchObject({ status: 404, code: "restream.session.not_found" });
      const byApp = await (await app(t))(method, path, method === "POST" ? {} : undefined);
      expect(byApp.body, path).toMatchObject({ status: 404, code: "restream.session.not_found" });
    }
    const missing = await other.call("GET", `/sessions/rss_${"0".repeat(26)}`);
    expect(missing.body).toMatchObject({ status: 404, code: "restream.session.not_found" });
    const ended = await (await service(t))("POST", `/sessions/${sessionId}/end`, {});
    expect(ended.body).toMatchObject({ changed: true, session: { state: "ended" } });
  });

  it("lists every worker with its generation, state and open sessions, to services and apps", async () => {
    const { worker, sessionId } = await openSession();
    await worker.live(sessionId);
    const idle = await FakeWorker.of(t);
    await idle.register();
    await idle.register();
    for (const call of [await service(t), await app(t)]) {
      const listed = await call("GET", "/workers");
      expect(listed.status).toBe(200);
      const byId = new Map(listed.body.workers.map((w: { id: string }) => [w.id, w]));
      expect(byId.get(worker.id)).toMatchObject({ generation: 1, state: "active", open_sessions: 1 });
      expect(byId.get(idle.id)).toMatchObject({ generation: 2, state: "active" });
      expect((byId.get(idle.id) as { open_sessions?: number }).open_sessions ?? 0).toBe(0);
    }
  });
});
