import { afterAll, beforeAll, expect } from "vitest";
import { describeWith, itWith } from "../../support/skips.js";
import { accepts } from "../../support/ports.js";
import { until } from "../../support/until.js";
import { FakeControlPlane } from "./support/fake-control-plane.js";
import {
  destination,
  encoder,
  HAS_FFMPEG,
  newKey,
  outputProcesses,
  startWorker,
  type Destination,
  type Running,
} from "./support/media.js";

describeWith(HAS_FFMPEG, "a media worker's end: fenced or stopped", () => {
  const encoders: Running[] = [];
  let target: Destination;

  beforeAll(async () => {
    target = await destination();
  });
  afterAll(async () => {
    await Promise.all(encoders.map((running) => running.stop()));
    await target.stop();
  });

  /** A worker holding a live session with one live output. */
  const busyWorker = async (control: FakeControlPlane) => {
    const worker = await startWorker(control);
    const key = newKey();
    const destinationKey = newKey();
    const order = { outputId: "out_busy", url: target.rtmpUrl(destinationKey), format: "flv" as const, secrets: [] };
    control.allow(key, "ses_busy", [order]);
    const running = encoder(`${worker.ingestUrl}/${key}`);
    encoders.push(running);
    await control.untilOutput("out_busy", "live");
    return { worker, running };
  };

  itWith(HAS_FFMPEG, "a fenced heartbeat stops everything and reports nothing more", async () => {
    const control = new FakeControlPlane();
    const { worker, running } = await busyWorker(control);
    const reported = control.sessionReports.length + control.outputReports.length;
    control.fence = true;
    expect(await worker.stopped).toBe("fenced");
    await until(() => running.exit() !== undefined);
    expect(await outputProcesses()).toEqual([]);
    expect(await accepts(worker.ingestUrl)).toBe(false);
    expect(await accepts(worker.playbackBase)).toBe(false);
    // A newer generation holds the work now: the fenced one's reports would be stale.
    expect(control.sessionReports.length + control.outputReports.length).toBe(reported);
    const beats = control.heartbeats.length;
    await worker.stop();
    expect(control.heartbeats.length).toBe(beats);
  });

  itWith(HAS_FFMPEG, "stop() ends the sessions, leaves no FFmpeg child and closes every socket", async () => {
    const control = new FakeControlPlane();
    const { worker } = await busyWorker(control);
    expect(await outputProcesses()).toHaveLength(1);
    await worker.stop();
    expect(await outputProcesses()).toEqual([]);
    expect(await accepts(worker.ingestUrl)).toBe(false);
    expect(await accepts(worker.playbackBase)).toBe(false);
    expect(await worker.stopped).toBe("stopped");
    expect(control.outputStates("out_busy").at(-1)).toBe("stopped");
    expect(control.sessionReports.at(-1)).toMatchObject({
      sessionId: "ses_busy",
      state: "ended",
      endReason: "worker_stopped",
    });
  });
});
