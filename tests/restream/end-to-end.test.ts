import { afterAll, beforeAll, expect, it } from "vitest";
import { NetworkAdminService } from "../../gen/pf/network/v1/admin_pb.js";
import { outboxEvents } from "../support/outbox.js";
import { qualified } from "../../services/kit/db/orm.js";
import { startTestPlatform, type HttpAnswer, type TestPlatform } from "../support/platform.js";
import { describeWith } from "../support/skips.js";
import { until } from "../support/until.js";
import { destination, encoder, HAS_FFMPEG, probe, type Destination, type Running } from "./media/support/media.js";

const CAPS = [
  "restream.stream.read",
  "restream.stream.write",
  "restream.output.read",
  "restream.output.write",
  "restream.session.read",
  "restream.session.end",
  "restream.key.rotate",
];

// The whole broadcast on loopback: a real encoder (FFmpeg) publishes to the embedded ingest (node-media-server) with
// the ingest key, the session goes live in restream and on the owner's channel in live, an output pushes it with
// FFmpeg to a second RTMP server (the destination, allowed by the test-only PF_FETCH_ALLOW_HOSTS), and a key rotation
// with end_sessions cuts the encoder. Every answer, stored log line and event of the run is then searched for the keys.
describeWith(HAS_FFMPEG, "a broadcast from encoder to destination", () => {
  let t: TestPlatform;
  let sink: Destination;
  let owner: string;
  const answers: HttpAnswer[] = [];
  let call: (method: string, path: string, body?: unknown) => Promise<HttpAnswer>;

  beforeAll(async () => {
    sink = await destination();
    const sinkHost = new URL(sink.rtmpUrl("x")).host;
    t = await startTestPlatform({
      services: ["network", "restream", "live"],
      env: {
        PF_RESTREAM_EMBEDDED_WORKER: "on",
        PF_RESTREAM_HEARTBEAT_MS: "200",
        PF_FETCH_ALLOW_HOSTS: sinkHost,
      },
    });
    owner = "usr_broadcaster1";
    const admin = await t.token({ kind: "service", svc: "network", caps: ["network.admin"] });
    await t
      .client(NetworkAdminService, admin)
      .upsertSubject({ id: owner, display: { displayName: "The Broadcaster", handle: "broadcaster" } });
    const token = await t.token({ kind: "user", sub: owner, caps: CAPS });
    call = async (method, path, body) => {
      const answer = await t.http(method, path, { token, ...(body === undefined ? {} : { body }) });
      answers.push(answer);
      return answer;
    };
  }, 60_000);
  afterAll(async () => {
    await t?.stop();
    await sink?.stop();
  });

  it("goes live, pushes to its destination, and is cut by a rotation with end_sessions", async () => {
    const created = await call("POST", "/restream/api/v1/streams", { title: "Morning show" });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const stream = created.body.stream;
    const ingestKey: string = created.body.ingest_key;
    expect(ingestKey.length).toBeGreaterThanOrEqual(32);
    const destinationKey = "dest-stream-key-9f3a";
    const added = await call("POST", `/restream/api/v1/streams/${stream.id}/destinations`, {
      name: "The other server",
      url: `rtmp://${new URL(sink.rtmpUrl("x")).host}/live`,
      stream_key: destinationKey,
      enabled: false,
    });
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    expect(added.body.destination.stream_key_masked).toMatch(/9f3a$/);

    const publisher: Running = encoder(`${stream.ingest_urls[0]}/${ingestKey}`);
    try {
      let sessionId = "";
      await until(async () => {
        const read = await call("GET", `/restream/api/v1/sessions?stream_id=${stream.id}&state=live`);
        sessionId = read.body.sessions?.[0]?.id ?? "";
        return sessionId !== "";
      }, 30_000);
      const session = (await call("GET", `/restream/api/v1/sessions/${sessionId}`)).body.session;
      expect(session).toMatchObject({ state: "live", stream_id: stream.id });
      expect(session.generation).toBeGreaterThan(0);

      // The owner's channel in live shows it, fed by restream's events.
      await until(async () => {
        const channel = await t.http("GET", "/live/api/streams/channel/broadcaster");
        answers.push(channel);
        return channel.status === 200 && JSON.stringify(channel.body).includes("Morning show");
      }, 30_000);

      const started = await call("POST", `/restream/api/v1/destinations/${added.body.destination.id}/start`, {});
      expect(started.status, JSON.stringify(started.body)).toBe(200);
      const outputId: string = started.body.output.id;
      await until(async () => {
        const outputs = await call("GET", `/restream/api/v1/sessions/${sessionId}/outputs`);
        return outputs.body.outputs?.some(
          (output: { id: string; state: string }) => output.id === outputId && output.state === "live",
        );
      }, 30_000);
      // Frames arrived at the destination.
      const streams = await probe(sink.rtmpUrl(destinationKey));
      expect(streams.map((each) => each.codec_type).sort()).toEqual(["audio", "video"]);

      const rotated = await call("POST", `/restream/api/v1/streams/${stream.id}/keys/rotate`, { end_sessions: true });
      expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
      expect(rotated.body.ended_session_ids).toEqual([sessionId]);
      const newKey: string = rotated.body.ingest_key;
      // The encoder is cut.
      await until(() => publisher.exit() !== undefined, 30_000);
      const ended = (await call("GET", `/restream/api/v1/sessions/${sessionId}`)).body.session;
      expect(ended).toMatchObject({ state: "ended", end_reason: "key_rotated" });

      // No answer, stored log line or event of the run carries a key.
      await call("GET", `/restream/api/v1/outputs/${outputId}/logs`);
      await call("GET", `/restream/api/v1/destinations/${added.body.destination.id}/logs`);
      await call("GET", `/restream/api/v1/streams/${stream.id}/keys`);
      const secrets = [ingestKey, newKey, destinationKey];
      const stored = [
        ...answers
          .filter((answer) => answer !== created && answer !== rotated)
          .map((answer) => JSON.stringify(answer.body)),
        ...(await outboxEvents(t, "restream")).map((event) => event.payload),
        ...(await outboxEvents(t, "live")).map((event) => event.payload),
        ...(await storedLogLines(t)),
      ];
      for (const secret of secrets) for (const text of stored) expect(text).not.toContain(secret);
    } finally {
      await publisher.stop();
    }
  }, 180_000);
});

/** Every output log line restream stored. */
async function storedLogLines(t: TestPlatform): Promise<string[]> {
  const em = t.platform.contexts.get("restream")!.orm.em;
  const rows = await em.getConnection().execute<{ text: string }[]>(`select text from ${qualified(em, "output_logs")}`);
  return rows.map((row) => row.text);
}
