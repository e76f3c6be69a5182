import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../services/kit/runtime/config.js";
import { createLogger } from "../../../services/kit/runtime/logger.js";
import type { OutputOrder } from "../../../services/restream/media/control-plane.js";
import type { RunningMediaWorker } from "../../../services/restream/media/worker.js";
import { restreamSettings } from "../../../services/restream/settings.js";
import { outputBackoff } from "../../../services/restream/workers/media.js";
import { describeWith, itWith } from "../../support/skips.js";
import { until } from "../../support/until.js";
import { FakeControlPlane } from "./support/fake-control-plane.js";
import {
  destination,
  encoder,
  HAS_FFMPEG,
  newKey,
  startWorker,
  type Destination,
  type Running,
} from "./support/media.js";

describe("the embedded worker's output restarts", () => {
  it("restarts an output PF_RESTREAM_OUTPUT_RESTARTS times: the exit after the last restart fails it", () => {
    const settings = restreamSettings(loadConfig({ ...process.env, PF_RESTREAM_OUTPUT_RESTARTS: "2" }));
    expect(outputBackoff(settings).maxFailures).toBe(3);
  });
});

describeWith(HAS_FFMPEG, "the media worker's reports and log", () => {
  const control = new FakeControlPlane();
  const logged: string[] = [];
  const encoders: Running[] = [];
  let worker: RunningMediaWorker;
  let target: Destination;

  beforeAll(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logged.push(chunk.toString("utf8"));
        done();
      },
    });
    [worker, target] = await Promise.all([
      startWorker(control, { logger: createLogger("debug", sink) }),
      destination(),
    ]);
  });
  afterAll(async () => {
    await Promise.all(encoders.map((running) => running.stop()));
    await worker.stop();
    await target.stop();
  });

  const publish = (key: string) => {
    const running = encoder(`${worker.ingestUrl}/${key}`);
    encoders.push(running);
    return running;
  };

  itWith(HAS_FFMPEG, "tries a state report again until it is applied", async () => {
    const key = newKey();
    control.allow(key, "ses_retried");
    control.failReports = 2;
    publish(key);
    await until(() => control.sessionStates("ses_retried").includes("live"));
    expect(control.failedReports).toBeGreaterThanOrEqual(2);
  });

  itWith(HAS_FFMPEG, "lets a session go and reports it ended when its admission throws", async () => {
    const key = newKey();
    // An answer the worker cannot use (no outputs list): admitting it throws once media flows.
    control.allow(key, "ses_broken", null as unknown as OutputOrder[]);
    const running = publish(key);
    await until(() => control.sessionStates("ses_broken").includes("ended"));
    expect(control.sessionReports.filter((r) => r.sessionId === "ses_broken").at(-1)).toMatchObject({
      endReason: "worker_error",
    });
    await until(() => running.exit() !== undefined);
    const beats = control.heartbeats.length;
    await until(() => control.heartbeats.length > beats);
    expect(control.heartbeats.at(-1)!.sessionIds).not.toContain("ses_broken");
  });

  itWith(
    HAS_FFMPEG,
    "logs no ingest key, stream key or encoder address during a publish and an output start",
    async () => {
      const ingestKey = newKey();
      const streamKey = newKey();
      const order = {
        outputId: "out_logged",
        url: target.rtmpUrl(streamKey),
        format: "flv" as const,
        secrets: [streamKey],
      };
      control.allow(ingestKey, "ses_logged", [order]);
      publish(ingestKey);
      await control.untilOutput("out_logged", "live");
      // A refused publish too: its line names the reason, not the encoder's address.
      const refusedKey = newKey();
      const refused = publish(refusedKey);
      await until(() => refused.exit() !== undefined);
      await until(() => logged.some((line) => line.includes("publish refused")));
      const text = logged.join("");
      expect(text.length).toBeGreaterThan(0);
      for (const secret of [ingestKey, streamKey, refusedKey]) expect(text).not.toContain(secret);
      const refusal = JSON.parse(logged.find((line) => line.includes("publish refused"))!) as Record<string, unknown>;
      expect(refusal).not.toHaveProperty("remoteAddress");
      expect(JSON.stringify(refusal)).not.toContain("127.0.0.1");
    },
  );
});
