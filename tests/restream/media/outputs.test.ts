import { afterAll, beforeAll, expect } from "vitest";
import type { OutputOrder } from "../../../services/restream/media/control-plane.js";
import type { RunningMediaWorker } from "../../../services/restream/media/worker.js";
import { describeWith, itWith } from "../../support/skips.js";
import { until } from "../../support/until.js";
import { FakeControlPlane } from "./support/fake-control-plane.js";
import {
  destination,
  encoder,
  HAS_FFMPEG,
  newKey,
  outputProcesses,
  probe,
  startWorker,
  type Destination,
  type Running,
} from "./support/media.js";

describeWith(HAS_FFMPEG, "outputs pushed by FFmpeg to a destination", () => {
  const control = new FakeControlPlane();
  const ingestKey = newKey();
  const destinationKey = newKey();
  let worker: RunningMediaWorker;
  let target: Destination;
  let source: Running;
  let order: OutputOrder;

  beforeAll(async () => {
    [worker, target] = await Promise.all([startWorker(control), destination()]);
    order = { outputId: "out_push", url: target.rtmpUrl(destinationKey), format: "flv", secrets: [destinationKey] };
    control.allow(ingestKey, "ses_push", [order]);
    source = encoder(`${worker.ingestUrl}/${ingestKey}`);
  });
  afterAll(async () => {
    await source.stop();
    await worker.stop();
    await target.stop();
  });

  itWith(HAS_FFMPEG, "starts the granted outputs once media flows: real frames reach the destination", async () => {
    await control.untilOutput("out_push", "live");
    expect(control.outputStates("out_push").slice(0, 2)).toEqual(["starting", "live"]);
    const streams = await probe(target.flvUrl(destinationKey));
    expect(streams).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ codec_type: "video", codec_name: "h264", width: 320, height: 240 }),
        expect.objectContaining({ codec_type: "audio", codec_name: "aac" }),
      ]),
    );
  });

  itWith(HAS_FFMPEG, "reports its health while live, at most about once a second", async () => {
    await until(() => control.progressOf("out_push").length >= 3);
    const progress = control.progressOf("out_push");
    const [first, , third] = progress;
    expect(third.frames).toBeGreaterThan(first.frames);
    expect(third.outTimeMs).toBeGreaterThan(first.outTimeMs);
    expect(third.fps).toBeGreaterThan(0);
    expect(third.bitrateKbps).toBeGreaterThan(0);
    expect(third.speed).toBeGreaterThan(0);
    // Three reports span at least the two seconds the throttle allows (FFmpeg writes one every half second).
    expect(third.outTimeMs - first.outTimeMs).toBeGreaterThanOrEqual(1_500);
    expect(control.outputStates("out_push").every((state) => state === "starting" || state === "live")).toBe(true);
  });

  itWith(HAS_FFMPEG, "the destination going away: reconnecting, then failed with the reason in its logs", async () => {
    await target.stop();
    await control.untilOutput("out_push", "failed");
    const states = control.outputStates("out_push");
    expect(states.indexOf("reconnecting")).toBeGreaterThan(states.indexOf("live"));
    expect(states.at(-1)).toBe("failed");
    const failed = control.outputReports.find((report) => report.state === "failed");
    expect(failed?.reason).toMatch(/gave up after 3 failed runs in a row/);
    const lines = control.logs.filter((call) => call.outputId === "out_push").flatMap((call) => call.lines);
    expect(lines).toContain(failed?.reason);
    expect(lines.filter((line) => /restarting in \d+ ms/.test(line))).toHaveLength(2);
    // FFmpeg named the destination in its errors: the URL is there, its path masked.
    const port = new URL(order.url).port;
    expect(lines.some((line) => line.includes(`rtmp://127.0.0.1:${port}/***`))).toBe(true);
    expect(await outputProcesses()).toEqual([]);
    // The session itself stays live: only its output failed.
    expect(control.sessionStates("ses_push")).toEqual(["live"]);
  });

  itWith(HAS_FFMPEG, "no appended log line holds the destination's stream key or the ingest key", () => {
    const everything = JSON.stringify([control.logs, control.outputReports, control.sessionReports]);
    expect(control.allLines().length).toBeGreaterThan(0);
    expect(everything).not.toContain(destinationKey);
    expect(everything).not.toContain(ingestKey);
    expect(everything).not.toContain(encodeURIComponent(destinationKey));
  });
});
