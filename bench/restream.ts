import { destination, encoder, type Running } from "../tests/restream/media/support/media.js";
import { percentile, type Benchmark, type LoadResult } from "./load.js";
import { startBenchPlatform } from "./platform.js";

/** Publishes timed one after another: each is a new encoder and a new session. */
const PUBLISHES = 10;
const OWNER = "usr_benchbroadcaster";
const CAPS = ["restream.stream.write", "restream.output.write", "restream.session.read"];

/**
 * `restream publish`: how long a broadcast takes to show, on loopback with real FFmpeg encoders. (a) reference: an
 * encoder publishing straight to a bare RTMP server (node-media-server in its own process) until the first FLV bytes
 * can be read back from it; (b) an encoder publishing to the embedded ingest until restream answers its session
 * `live` (the publish authorised by the worker API, media flowing, the report stored); (c) the same publish until
 * the first bytes reach a destination through an auto-started FFmpeg output.
 */
export const restreamPublish: Benchmark = {
  name: "restream publish",
  async run() {
    const sink = await destination();
    const bench = await startBenchPlatform({
      PF_SERVICES: "restream",
      PF_RESTREAM_EMBEDDED_WORKER: "on",
      PF_FETCH_ALLOW_HOSTS: new URL(sink.rtmpUrl("x")).host,
    });
    try {
      const token = await bench.platform.mintToken({ kind: "user", sub: OWNER, caps: CAPS });
      const api = async (method: string, path: string, body?: unknown) => {
        const answer = await fetch(`${bench.gatewayUrl}/restream/api/v1${path}`, {
          method,
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        const json = (await answer.json()) as Record<string, any>;
        if (!answer.ok) throw new Error(`${method} ${path} answered ${answer.status}: ${JSON.stringify(json)}`);
        return json;
      };
      const { stream, ingest_key: ingestKey } = await api("POST", "/streams", { title: "bench" });
      const publishUrl = `${stream.ingest_urls[0]}/${ingestKey}`;

      const direct = await timed("encoder → bare RTMP server: first FLV byte", async (i) => {
        const key = `direct${i}`;
        return { encoder: () => encoder(sink.rtmpUrl(key)), ready: () => firstByte(sink.flvUrl(key)) };
      });
      const live = await timed("encoder → restream: session live", async () => ({
        encoder: () => encoder(publishUrl),
        ready: async () => (await api("GET", `/sessions?stream_id=${stream.id}&state=live`)).sessions.length > 0,
        after: () => noneOpen(api, stream.id),
      }));
      const { destination } = await api("POST", `/streams/${stream.id}/destinations`, {
        url: `rtmp://${new URL(sink.rtmpUrl("x")).host}/live`,
      });
      const pushed = await timed("encoder → restream → destination: first FLV byte", async (i) => {
        // A key of its own each time: the previous push may linger at the destination for a moment.
        await api("PATCH", `/destinations/${destination.id}`, { stream_key: `pushed${i}` });
        return {
          encoder: () => encoder(publishUrl),
          ready: () => firstByte(sink.flvUrl(`pushed${i}`)),
          after: () => noneOpen(api, stream.id),
        };
      });
      return {
        rows: [direct, live, pushed],
        notes: [
          `session live after the publish: ${(live.p50 / direct.p50).toFixed(2)}× the bare server's first byte at p50 ` +
            `(${live.p50.toFixed(0)} vs ${direct.p50.toFixed(0)} ms), p99 ${live.p99.toFixed(0)} ms`,
          `first byte at the destination: ${(pushed.p50 / direct.p50).toFixed(2)}× the direct publish at p50 ` +
            `(+${(pushed.p50 - direct.p50).toFixed(0)} ms: authorisation, the output's FFmpeg start, one more hop), ` +
            `p99 ${pushed.p99.toFixed(0)} ms (${PUBLISHES} publishes each)`,
        ],
      };
    } finally {
      await bench.stop();
      await sink.stop();
    }
  },
};

interface Trial {
  /** Starts the trial's encoder: the clock runs from here. */
  encoder(): Running;
  ready(): Promise<boolean>;
  /** Waits until the next trial may start (the session closed). */
  after?(): Promise<void>;
}

/** Times PUBLISHES trials one after another, from the encoder's spawn until `ready`. */
async function timed(label: string, trial: (index: number) => Promise<Trial>): Promise<LoadResult> {
  const times = new Float64Array(PUBLISHES);
  let failures = 0;
  for (let i = 0; i < PUBLISHES; i++) {
    const { encoder: start, ready, after } = await trial(i);
    const started = performance.now();
    const running = start();
    try {
      const deadline = started + 30_000;
      while (!(await ready().catch(() => false))) {
        if (performance.now() > deadline || running.exit() !== undefined) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      if (performance.now() > deadline || running.exit() !== undefined) failures++;
      times[i] = performance.now() - started;
    } finally {
      await running.stop();
      await after?.();
    }
  }
  const sorted = times.sort();
  return {
    label,
    requests: PUBLISHES,
    rps: 0,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    failures,
    cpuPerRequest: 0,
  };
}

/** Whether an HTTP-FLV URL answers its first media bytes now. */
async function firstByte(url: string): Promise<boolean> {
  const controller = new AbortController();
  try {
    const answer = await fetch(url, { signal: controller.signal });
    if (!answer.ok || !answer.body) return false;
    const { value } = await answer.body.getReader().read();
    // The FLV header (13 bytes) comes at once; a tag after it means media.
    return (value?.byteLength ?? 0) > 13;
  } finally {
    controller.abort();
  }
}

/** How long a left encoder's session may take to end before the run is given up. */
const NONE_OPEN_WITHIN_MS = 30_000;

async function noneOpen(api: (method: string, path: string) => Promise<Record<string, unknown>>, streamId: string) {
  const deadline = Date.now() + NONE_OPEN_WITHIN_MS;
  for (;;) {
    const { sessions } = (await api("GET", `/sessions?stream_id=${streamId}&state=open`)) as { sessions: unknown[] };
    if (sessions.length === 0) return;
    if (Date.now() > deadline)
      throw new Error(`stream ${streamId} still has an open session ${NONE_OPEN_WITHIN_MS} ms after its encoder left`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
