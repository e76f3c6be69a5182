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
  startWorker,
  type Destination,
  type Running,
} from "./support/media.js";

describeWith(HAS_FFMPEG, "the control plane's commands", () => {
  const control = new FakeControlPlane();
  const encoders: Running[] = [];
  let worker: RunningMediaWorker;
  let target: Destination;

  beforeAll(async () => {
    [worker, target] = await Promise.all([startWorker(control), destination()]);
  });
  afterAll(async () => {
    await Promise.all(encoders.map((running) => running.stop()));
    await worker.stop();
    await target.stop();
  });

  const orderTo = (outputId: string): OutputOrder => {
    const key = newKey();
    return { outputId, url: target.rtmpUrl(key), format: "flv", secrets: [key] };
  };
  /** A publish granted as `sessionId` with these outputs, once reported live. */
  const live = async (sessionId: string, outputs: OutputOrder[] = []) => {
    const key = newKey();
    control.allow(key, sessionId, outputs);
    const running = encoder(`${worker.ingestUrl}/${key}`);
    encoders.push(running);
    await until(() => control.sessionStates(sessionId).includes("live"));
    return running;
  };

  itWith(HAS_FFMPEG, "end_session disconnects the encoder and reports the session ended with its reason", async () => {
    const running = await live("ses_ended");
    control.send({ kind: "end_session", sessionId: "ses_ended", reason: "key_rotated" });
    await until(() => running.exit() !== undefined);
    await until(() => control.sessionStates("ses_ended").includes("ended"));
    expect(control.sessionReports.filter((report) => report.sessionId === "ses_ended").at(-1)).toMatchObject({
      state: "ended",
      endReason: "key_rotated",
    });
  });

  itWith(
    HAS_FFMPEG,
    "stop_output stops that output only; start_output starts another on the live session",
    async () => {
      await live("ses_two", [orderTo("out_kept"), orderTo("out_stopped")]);
      await Promise.all(["out_kept", "out_stopped"].map((id) => control.untilOutput(id, "live")));
      expect(await outputProcesses()).toHaveLength(2);
      control.send({ kind: "stop_output", outputId: "out_stopped" });
      await control.untilOutput("out_stopped", "stopped");
      expect(await outputProcesses()).toHaveLength(1);
      control.send({ kind: "start_output", sessionId: "ses_two", output: orderTo("out_added") });
      await control.untilOutput("out_added", "live");
      expect(control.outputStates("out_added")[0]).toBe("starting");
      expect(control.outputStates("out_kept")).not.toContain("stopped");
      expect(await outputProcesses()).toHaveLength(2);
    },
  );

  itWith(
    HAS_FFMPEG,
    "start_output for a session this worker does not hold fails the output with the reason",
    async () => {
      control.send({ kind: "start_output", sessionId: "ses_elsewhere", output: orderTo("out_orphan") });
      await until(() => control.outputStates("out_orphan").length > 0);
      expect(control.outputReports.filter((report) => report.outputId === "out_orphan")).toEqual([
        expect.objectContaining({ state: "failed", reason: "session ses_elsewhere is not live on this worker" }),
      ]);
    },
  );

  itWith(HAS_FFMPEG, "a cut watch is taken up again after the last command carried out", async () => {
    const running = await live("ses_acknowledged");
    const seq = control.send({ kind: "end_session", sessionId: "ses_acknowledged", reason: "ended" });
    await until(() => running.exit() !== undefined);
    const watches = control.watches.length;
    control.cut();
    await until(() => control.watches.length > watches);
    expect(control.watches.at(-1)).toMatchObject({ afterSeq: seq });
  });

  itWith(HAS_FFMPEG, "the encoder leaving stops the session's outputs and ends it", async () => {
    const running = await live("ses_outputs", [orderTo("out_with_session")]);
    await control.untilOutput("out_with_session", "live");
    await running.stop();
    await until(() => control.sessionStates("ses_outputs").includes("ended"));
    expect(control.outputStates("out_with_session").at(-1)).toBe("stopped");
    // The output's end is reported before the session's.
    const { sequence } = control;
    expect(sequence.indexOf("output out_with_session stopped")).toBeGreaterThan(-1);
    expect(sequence.indexOf("output out_with_session stopped")).toBeLessThan(
      sequence.indexOf("session ses_outputs ended"),
    );
    expect(control.sessionReports.at(-1)).toMatchObject({ sessionId: "ses_outputs", endReason: "encoder_left" });
  });
});
