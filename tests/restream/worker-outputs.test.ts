import { ConnectError } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { problemOf } from "../../services/kit/handler/problem.js";
import { outboxEvents } from "../support/outbox.js";
import { usePlatform } from "../support/platform.js";
import { liveStream, resolveAs } from "./support/destinations.js";
import { FakeWorker } from "./support/worker.js";

const t = usePlatform({ services: ["restream"] });
beforeAll(() => resolveAs(t));

const KEY = "worker-key-secret-7777";

/** A live session with one started output: its owner, worker, destination and output. */
async function startedOutput() {
  const live = await liveStream(t);
  const destinationId = await live.destination({ stream_key: KEY });
  const sessionId = await live.open();
  const outputId = (await live.owner.call("POST", `/destinations/${destinationId}/start`, {})).body.output.id as string;
  const read = async () => {
    const outputs = (await live.owner.call("GET", `/sessions/${sessionId}/outputs`)).body.outputs as any[];
    return outputs.find((output) => output.id === outputId);
  };
  return { ...live, destinationId, sessionId, outputId, read };
}

/** The problem a call was refused with. */
async function refusal(call: Promise<unknown>) {
  const error = await call.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ConnectError);
  return problemOf(error);
}

async function states(outputId: string) {
  const events = await outboxEvents(t, "restream", outputId);
  return events
    .filter((event) => event.subject === "restream.output.state_changed")
    .map((event) => JSON.parse(event.payload).state as string);
}

const progress = (frames: number) => ({
  frames: BigInt(frames),
  fps: 30,
  bitrateKbps: 2500.5,
  outTimeMs: BigInt(frames * 33),
  speed: 1.01,
});

describe("the worker API's outputs", () => {
  it("applies the state machine: live with health, restarts counted, an event per change and none on progress", async () => {
    const { worker, outputId, read } = await startedOutput();
    expect((await worker.reportOutput(outputId, "live", "", progress(30))).applied).toBe(true);
    let output = await read();
    expect(output).toMatchObject({
      state: "live",
      health: { frames: "30", fps: 30, bitrate_kbps: 2500.5, out_time_ms: "990", speed: 1.01 },
    });
    expect(output.health.reported_at).toBeDefined();
    // Progress alone: kept, no event.
    expect((await worker.reportOutput(outputId, "live", "", progress(90))).applied).toBe(true);
    expect((await read()).health.frames).toBe("90");
    // A repeat without progress changes nothing.
    expect((await worker.reportOutput(outputId, "live")).applied).toBe(false);

    await worker.reportOutput(outputId, "reconnecting", "FFmpeg exited (code 1)");
    await worker.reportOutput(outputId, "live", "", progress(120));
    await worker.reportOutput(outputId, "reconnecting");
    output = await read();
    expect(output).toMatchObject({ state: "reconnecting", restarts: 2 });
    expect(output.reason ?? "").toBe("");

    const failed = await worker.reportOutput(
      outputId,
      "failed",
      `FFmpeg exited (code 1): rtmp://live.example.com/app/${KEY}: I/O error; key ${KEY}; gave up`,
    );
    expect(failed.applied).toBe(true);
    output = await read();
    expect(output).toMatchObject({ state: "failed", restarts: 2 });
    expect(output.ended_at).toBeDefined();
    expect(output.reason).toBe("FFmpeg exited (code 1): rtmp://live.example.com/***: I/O error; key ***; gave up");
    // A failed output never comes back.
    expect((await worker.reportOutput(outputId, "live", "", progress(500))).applied).toBe(false);
    expect((await read()).state).toBe("failed");

    expect(await states(outputId)).toEqual(["starting", "live", "reconnecting", "live", "reconnecting", "failed"]);
    expect(JSON.stringify(await outboxEvents(t, "restream", outputId))).not.toContain(KEY);
  });

  it("answers applied false about an output already stopped", async () => {
    const { owner, worker, destinationId, outputId, read } = await startedOutput();
    await owner.call("POST", `/destinations/${destinationId}/stop`, {});
    expect((await worker.reportOutput(outputId, "live", "", progress(10))).applied).toBe(false);
    expect((await worker.reportOutput(outputId, "failed", "late")).applied).toBe(false);
    expect(await read()).toMatchObject({ state: "stopped", reason: "stopped_by_owner" });
  });

  it("refuses a fenced generation's reports (409 restream.worker_fenced), changing nothing", async () => {
    const { worker, outputId, read } = await startedOutput();
    await worker.reportOutput(outputId, "live", "", progress(30));
    const old = worker.as(worker.generation);
    await worker.register();
    // The new generation interrupted the old one's session, and its outputs with it.
    const before = await read();
    expect(before).toMatchObject({ state: "stopped", reason: "session_ended" });
    const fenced = await refusal(old.reportOutput(outputId, "failed", "stale"));
    expect(fenced).toMatchObject({ status: 409, code: "restream.worker_fenced" });
    expect((await refusal(old.appendLogs(outputId, ["stale line"]))).code).toBe("restream.worker_fenced");
    expect(await read()).toEqual(before);
    // The current generation of the worker speaks of no output of the old one: nothing applies.
    expect((await worker.reportOutput(outputId, "failed", "late")).applied).toBe(false);
  });

  it("answers 404 restream.output.not_found for an output another worker pushes, or none", async () => {
    const { outputId, read } = await startedOutput();
    const stranger = await FakeWorker.of(t);
    await stranger.register();
    expect((await refusal(stranger.reportOutput(outputId, "failed", "x"))).code).toBe("restream.output.not_found");
    expect((await refusal(stranger.appendLogs(outputId, ["x"]))).code).toBe("restream.output.not_found");
    expect((await refusal(stranger.reportOutput("rso_missing", "live"))).status).toBe(404);
    expect((await read()).state).toBe("starting");
  });
});
