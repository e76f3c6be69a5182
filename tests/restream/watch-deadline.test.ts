import { describe, expect, it } from "vitest";
import { usePlatform } from "../support/platform.js";
import { FakeWorker } from "./support/worker.js";

/**
 * A worker's command watch is a long stream bounded by its call's deadline (here PF_CALL_TIMEOUT_MS, 2.5 s): the
 * handler ends it cleanly a second short of that deadline, so the worker watches again at once, never after a
 * DEADLINE_EXCEEDED and a heartbeat's pause with commands held up meanwhile.
 */
const t = usePlatform({ services: ["restream"], env: { PF_CALL_TIMEOUT_MS: "2500" } });

describe("a worker's command watch", () => {
  it("ends by itself short of its deadline when called in memory (as the embedded media worker calls)", async () => {
    const worker = await FakeWorker.of(t);
    await worker.register();
    expect(await worker.watch().ended).toBeUndefined();
  });

  it("ends by itself short of the call scope's default deadline over gRPC, the caller having set none", async () => {
    const worker = await FakeWorker.overGrpc(t);
    await worker.register();
    expect(await worker.watch().ended).toBeUndefined();
  });
});
