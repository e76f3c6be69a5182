import { ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import type { RestreamContext } from "../../services/restream/context.js";
import { sweepLostWorkers } from "../../services/restream/workers/liveness.js";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { outboxEvents } from "../support/outbox.js";
import { usePlatform } from "../support/platform.js";
import { until } from "../support/until.js";
import { service, streamer } from "./support/streams.js";
import { FakeWorker } from "./support/worker.js";

const LOST_MS = 10_000;
const clock = new ManualClock(new Date());
// The sweep runs every 100 ms of real time; the workers' silence is measured on the manual clock.
const t = usePlatform({
  services: ["restream"],
  clock,
  env: { PF_RESTREAM_HEARTBEAT_MS: "100", PF_RESTREAM_WORKER_LOST_MS: String(LOST_MS) },
});

const workerState = async (id: string) => {
  const listed = await (await service(t))("GET", "/workers");
  return listed.body.workers.find((w: { id: string }) => w.id === id)?.state;
};

describe("worker liveness", () => {
  it("loses a worker silent past PF_RESTREAM_WORKER_LOST_MS: its sessions interrupted, its generation fenced", async () => {
    const owner = await streamer(t);
    const { key } = await owner.stream();
    const worker = await FakeWorker.of(t);
    await worker.register();
    const { sessionId } = await worker.authorize(key);
    await worker.live(sessionId);

    clock.advance(LOST_MS - 1);
    await sweepLostWorkers(t.platform.contexts.get("restream") as RestreamContext);
    expect(await workerState(worker.id)).toBe("active");

    clock.advance(2);
    // The leased sweep, by itself.
    await until(async () => (await workerState(worker.id)) === "lost");
    const session = await owner.call("GET", `/sessions/${sessionId}`);
    expect(session.body.session).toMatchObject({ state: "interrupted", end_reason: "worker_lost" });
    const subjects = (await outboxEvents(t, "restream", sessionId)).map((e) => e.subject);
    expect(subjects).toEqual(["restream.session.started", "restream.session.interrupted"]);

    expect((await worker.heartbeat([sessionId])).fenced).toBe(true);
    const report = await worker.ended(sessionId).then(
      () => "",
      (error: unknown) => ConnectError.from(error).rawMessage,
    );
    expect(report).toMatch(/fenced/);

    // Registering again: a new, active generation; the interrupted session stays so, the stream takes a new one.
    expect(await worker.register()).toBe(2);
    expect(await workerState(worker.id)).toBe("active");
    expect((await worker.live(sessionId)).applied).toBe(false);
    expect((await owner.call("GET", `/sessions/${sessionId}`)).body.session.state).toBe("interrupted");
    expect((await worker.authorize(key)).granted).toBe(true);
  });

  it("keeps a worker that beats its heart, and loses only the silent one", async () => {
    const beating = await FakeWorker.of(t);
    const silent = await FakeWorker.of(t);
    await beating.register();
    await silent.register();
    clock.advance(LOST_MS / 2);
    expect((await beating.heartbeat()).fenced).toBe(false);
    clock.advance(LOST_MS / 2 + 1);
    await until(async () => (await workerState(silent.id)) === "lost");
    // The same pass judged both on the same clock.
    await sweepLostWorkers(t.platform.contexts.get("restream") as RestreamContext);
    expect(await workerState(beating.id)).toBe("active");
    expect((await beating.heartbeat()).fenced).toBe(false);
  });
});
