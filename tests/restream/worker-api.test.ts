import { ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { ProblemSchema } from "../../gen/pf/v1/problem_pb.js";
import { qualified } from "../../services/kit/db/orm.js";
import { outboxEvents } from "../support/outbox.js";
import { usePlatform } from "../support/platform.js";
import { until } from "../support/until.js";
import { streamer } from "./support/streams.js";
import { FakeWorker } from "./support/worker.js";

const t = usePlatform({ services: ["restream"] });

/** The worker's stored commands (not yet acknowledged), oldest first. */
async function commandRows(workerId: string): Promise<{ generation: number; seq: string }[]> {
  const em = t.platform.contexts.get("restream")!.orm.em;
  const rows = await em
    .getConnection()
    .execute<{ generation: number; seq: string }[]>(
      `select generation, seq::text as seq from ${qualified(em, "worker_commands")} where worker_id = ? order by seq`,
      [workerId],
    );
  return rows.map((row) => ({ generation: row.generation, seq: row.seq }));
}

/** The problem code a call failed with ("" when it succeeded). */
async function codeOf(call: Promise<unknown>): Promise<string> {
  try {
    await call;
    return "";
  } catch (error) {
    return ConnectError.from(error).findDetails(ProblemSchema)[0]?.code ?? ConnectError.from(error).message;
  }
}

describe("the worker API: generations and fencing", () => {
  it("gives each registration one more generation; heartbeats of an older one answer fenced", async () => {
    const worker = await FakeWorker.of(t);
    expect(await worker.register()).toBe(1);
    expect((await worker.heartbeat()).fenced).toBe(false);
    const old = worker.as(1);
    expect(await worker.register()).toBe(2);
    expect((await old.heartbeat()).fenced).toBe(true);
    expect((await worker.heartbeat()).fenced).toBe(false);
    expect((await FakeWorker.of(t).then((w) => w.as(1).heartbeat())).fenced).toBe(true);
  });

  it("refuses every call of an old generation (409 restream.worker_fenced) and changes nothing", async () => {
    const owner = await streamer(t);
    const { key } = await owner.stream();
    const worker = await FakeWorker.of(t);
    await worker.register();
    const grant = await worker.authorize(key);
    const old = worker.as(1);
    await worker.register();
    expect(await codeOf(old.authorize(key))).toBe("restream.worker_fenced");
    expect(await codeOf(old.live(grant.sessionId))).toBe("restream.worker_fenced");
    expect(await codeOf(old.ended(grant.sessionId))).toBe("restream.worker_fenced");
    expect(await codeOf(old.commands(new AbortController().signal)[Symbol.asyncIterator]().next())).toBe(
      "restream.worker_fenced",
    );
    const session = await owner.call("GET", `/sessions/${grant.sessionId}`);
    expect(session.body.session).toMatchObject({ state: "interrupted", end_reason: "worker_lost" });
  });

  it("interrupts the sessions of earlier generations at registration, and a new generation never resurrects them", async () => {
    const owner = await streamer(t);
    const { id, key } = await owner.stream();
    const worker = await FakeWorker.of(t);
    await worker.register();
    const grant = await worker.authorize(key);
    await worker.live(grant.sessionId);
    await worker.register();
    const interrupted = await owner.call("GET", `/sessions/${grant.sessionId}`);
    expect(interrupted.body.session).toMatchObject({
      state: "interrupted",
      end_reason: "worker_lost",
      generation: 1,
      playback: { protocol: "none" },
    });
    expect((await worker.live(grant.sessionId)).applied).toBe(false);
    expect((await worker.ended(grant.sessionId)).applied).toBe(false);
    expect((await owner.call("GET", `/sessions/${grant.sessionId}`)).body.session.state).toBe("interrupted");
    // The encoder publishing again opens a new session on the new generation.
    const again = await worker.authorize(key);
    expect(again).toMatchObject({ granted: true, streamId: id });
    expect((await owner.call("GET", `/sessions/${again.sessionId}`)).body.session.generation).toBe(2);
    const subjects = (await outboxEvents(t, "restream", grant.sessionId)).map((e) => e.subject);
    expect(subjects).toEqual(["restream.session.started", "restream.session.interrupted"]);
  });
});

describe("the worker API: ingest authorisation", () => {
  it("opens a starting session on the worker's generation for an active key, with the outputs to start", async () => {
    const owner = await streamer(t);
    const { id, key } = await owner.stream();
    const worker = await FakeWorker.of(t);
    await worker.register();
    const grant = await worker.authorize(key, "198.51.100.4");
    expect(grant).toMatchObject({ granted: true, streamId: id, reason: "", outputs: [] });
    expect(grant.sessionId).toMatch(/^rss_/);
    const session = await owner.call("GET", `/sessions/${grant.sessionId}`);
    expect(session.body.session).toMatchObject({ state: "starting", worker_id: worker.id, generation: 1 });
  });

  it("refuses an unknown key, a second publish while a session is open, and an archived stream, opening nothing", async () => {
    const owner = await streamer(t);
    const { id, key } = await owner.stream();
    const worker = await FakeWorker.of(t);
    await worker.register();
    expect(await worker.authorize("not-a-key")).toMatchObject({ granted: false, reason: "unknown_key", sessionId: "" });
    const first = await worker.authorize(key);
    expect(await worker.authorize(key)).toMatchObject({ granted: false, reason: "session_open" });
    const open = await owner.call("GET", `/sessions?stream_id=${id}`);
    expect(open.body.sessions.map((s: { id: string }) => s.id)).toEqual([first.sessionId]);
    await worker.ended(first.sessionId);
    await owner.call("DELETE", `/streams/${id}`);
    expect(await worker.authorize(key)).toMatchObject({ granted: false, reason: "stream_archived" });
  });

  it("refuses a key hash that is not lowercase SHA-256 hex (400 naming key_hash)", async () => {
    const worker = await FakeWorker.of(t);
    await worker.register();
    const answer = await codeOf(
      worker.client.authorizeIngest({ workerId: worker.id, generation: 1, keyHash: "ABC", remoteAddress: "" }),
    );
    expect(answer).toBe("request.invalid");
  });
});

describe("the worker API: session reports", () => {
  it("goes live once (its started event), then ends with the worker's reason; repeats change nothing", async () => {
    const owner = await streamer(t);
    const { key } = await owner.stream({ settings: { recording: true } });
    const worker = await FakeWorker.of(t);
    await worker.register();
    const { sessionId } = await worker.authorize(key);
    expect((await worker.live(sessionId)).applied).toBe(true);
    expect((await worker.live(sessionId)).applied).toBe(false);
    expect((await owner.call("GET", `/sessions/${sessionId}`)).body.session.recording).toBe("recording");
    expect((await worker.ended(sessionId)).applied).toBe(true);
    expect((await worker.ended(sessionId)).applied).toBe(false);
    const ended = await owner.call("GET", `/sessions/${sessionId}`);
    expect(ended.body.session).toMatchObject({ state: "ended", end_reason: "encoder_left", recording: "stopped" });
    const events = await outboxEvents(t, "restream", sessionId);
    expect(events.map((e) => e.subject)).toEqual(["restream.session.started", "restream.session.ended"]);
    expect(JSON.parse(events[0]!.payload)).toMatchObject({
      state: "live",
      media: { video_codec: "h264", width: 1280 },
      playback: { protocol: "flv" },
    });
    for (const event of events) expect(event.payload).not.toContain(key);
  });

  it("answers a report about another worker's session or none as missing (404)", async () => {
    const owner = await streamer(t);
    const { key } = await owner.stream();
    const worker = await FakeWorker.of(t);
    await worker.register();
    const { sessionId } = await worker.authorize(key);
    const other = await FakeWorker.of(t);
    await other.register();
    expect(await codeOf(other.live(sessionId))).toBe("restream.session.not_found");
    expect(await codeOf(worker.live(`rss_${"0".repeat(26)}`))).toBe("restream.session.not_found");
    expect((await owner.call("GET", `/sessions/${sessionId}`)).body.session.state).toBe("starting");
  });
});

describe("the worker API: commands", () => {
  it("sends the commands waiting first, in order, then each as it is issued; again until acknowledged by after_seq", async () => {
    const owner = await streamer(t);
    const a = await owner.stream();
    const b = await owner.stream();
    const worker = await FakeWorker.of(t);
    await worker.register();
    const first = (await worker.authorize(a.key)).sessionId;
    const second = (await worker.authorize(b.key)).sessionId;
    await owner.call("POST", `/sessions/${first}/end`, {});
    await owner.call("POST", `/sessions/${second}/end`, {});
    const watch = worker.watch();
    let third: string;
    try {
      await until(() => watch.received.length >= 2);
      expect(watch.received.map((c) => c.sessionId)).toEqual([first, second]);
      third = (await worker.authorize(a.key)).sessionId;
      await owner.call("POST", `/sessions/${third}/end`, {});
      await until(() => watch.received.length >= 3);
      expect(watch.received.map((c) => c.sessionId)).toEqual([first, second, third]);
    } finally {
      watch.stop();
    }
    const seqs = watch.received.map((c) => c.seq);
    expect([...seqs].sort((x, y) => (x < y ? -1 : 1))).toEqual(seqs);
    // Cut before acknowledging: a new watch gets every one again, in order.
    const again = worker.watch();
    try {
      await until(() => again.received.length >= 3);
      expect(again.received.map((c) => c.seq)).toEqual(seqs);
    } finally {
      again.stop();
    }
    // Acknowledged up to the second: only the third comes, and the first two never again.
    const acknowledged = worker.watch(seqs[1]);
    try {
      await until(() => acknowledged.received.length >= 1);
      expect(acknowledged.received.map((c) => c.sessionId)).toEqual([third]);
    } finally {
      acknowledged.stop();
    }
    expect(await commandRows(worker.id)).toEqual([{ generation: 1, seq: String(seqs[2]) }]);
    const restart = worker.watch();
    try {
      const fourth = (await worker.authorize(b.key)).sessionId;
      await owner.call("POST", `/sessions/${fourth}/end`, {});
      await until(() => restart.received.length >= 2);
      expect(restart.received.map((c) => c.sessionId)).toEqual([third, fourth]);
    } finally {
      restart.stop();
    }
  });

  it("drops the commands of earlier generations when a new one registers", async () => {
    const owner = await streamer(t);
    const { key } = await owner.stream();
    const worker = await FakeWorker.of(t);
    await worker.register();
    const { sessionId } = await worker.authorize(key);
    await owner.call("POST", `/sessions/${sessionId}/end`, {});
    expect(await commandRows(worker.id)).toHaveLength(1);
    await worker.register();
    expect(await commandRows(worker.id)).toEqual([]);
  });

  it("ends the command stream of a generation once another registers", async () => {
    const owner = await streamer(t);
    const { key } = await owner.stream();
    const worker = await FakeWorker.of(t);
    await worker.register();
    const watch = worker.watch();
    // A command through the stream: it is open and past its first look.
    const { sessionId } = await worker.authorize(key);
    await owner.call("POST", `/sessions/${sessionId}/end`, {});
    await until(() => watch.received.length === 1);
    await worker.register();
    // The stream looks again within PF_RESTREAM_HEARTBEAT_MS and ends: a fenced generation gets no commands.
    expect(await watch.ended).toBeUndefined();
    watch.stop();
  });
});
