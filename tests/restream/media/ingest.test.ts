import { afterAll, beforeAll, expect } from "vitest";
import type { RunningMediaWorker } from "../../../services/restream/media/worker.js";
import { describeWith, itWith } from "../../support/skips.js";
import { until } from "../../support/until.js";
import { FakeControlPlane, sha256 } from "./support/fake-control-plane.js";
import { encoder, HAS_FFMPEG, newKey, probe, startWorker, type Running } from "./support/media.js";

describeWith(HAS_FFMPEG, "the embedded ingest authorises each publish by its key's hash", () => {
  const control = new FakeControlPlane();
  const encoders: Running[] = [];
  let worker: RunningMediaWorker;

  beforeAll(async () => {
    worker = await startWorker(control);
  });
  afterAll(async () => {
    await Promise.all(encoders.map((running) => running.stop()));
    await worker.stop();
  });

  const publish = (key: string) => {
    const running = encoder(`${worker.ingestUrl}/${key}`);
    encoders.push(running);
    return running;
  };

  itWith(HAS_FFMPEG, "registers with its ingest URL and playback origin, then heartbeats", async () => {
    expect(control.registrations).toEqual([
      expect.objectContaining({ ingestUrl: worker.ingestUrl, playbackBase: worker.playbackBase }),
    ]);
    expect(worker.ingestUrl).toMatch(/^rtmp:\/\/127\.0\.0\.1:\d+\/live$/);
    await until(() => control.heartbeats.length > 0);
    expect(control.heartbeats[0]).toMatchObject({ generation: worker.generation, sessionIds: [] });
  });

  itWith(HAS_FFMPEG, "a granted key's session is reported live with media info and playback", async () => {
    const key = newKey();
    control.allow(key, "ses_live");
    publish(key);
    await until(() => control.sessionStates("ses_live").includes("live"));
    const asked = control.authorizations.find((call) => call.keyHash === sha256(key));
    expect(asked).toMatchObject({ workerId: control.registrations[0].workerId, generation: worker.generation });
    expect(asked?.remoteAddress).toBe("127.0.0.1");
    expect(JSON.stringify(control.authorizations)).not.toContain(key);
    const live = control.sessionReports.find((report) => report.sessionId === "ses_live");
    expect(live?.media).toEqual({ videoCodec: "h264", width: 320, height: 240, fps: 25, audioCodec: "aac" });
    expect(live?.playback).toEqual({ protocol: "flv", url: `${worker.playbackBase}/live/ses_live.flv` });
    // The playback serves the session's media by session id: the key is in no URL given out.
    expect(live?.playback?.url).not.toContain(key);
    const streams = await probe(live!.playback!.url);
    expect(streams.map((stream) => stream.codec_name).sort()).toEqual(["aac", "h264"]);
    await until(() => control.heartbeats.some((beat) => beat.sessionIds.includes("ses_live")));
  });

  itWith(HAS_FFMPEG, "a wrong key is refused: the encoder is cut at once and no session is reported", async () => {
    const key = newKey();
    const refused = publish(key);
    await until(() => refused.exit() !== undefined);
    expect(control.authorizations.some((call) => call.keyHash === sha256(key))).toBe(true);
    expect(refused.exit()).not.toBe("code 0");
    expect(control.sessionReports.filter((report) => report.sessionId !== "ses_live")).toEqual([]);
  });

  itWith(HAS_FFMPEG, "an encoder leaving ends its session as encoder_left", async () => {
    const key = newKey();
    control.allow(key, "ses_leaving");
    const running = publish(key);
    await until(() => control.sessionStates("ses_leaving").includes("live"));
    await running.stop();
    await until(() => control.sessionStates("ses_leaving").includes("ended"));
    expect(control.sessionReports.filter((report) => report.sessionId === "ses_leaving")).toEqual([
      expect.objectContaining({ state: "live" }),
      expect.objectContaining({ state: "ended", endReason: "encoder_left" }),
    ]);
  });
});
