import { describe, expect, it } from "vitest";
import { usePlatform } from "../support/platform.js";
import { streamer } from "./support/streams.js";
import { FakeWorker } from "./support/worker.js";

const t = usePlatform({ services: ["restream"] });

const ROUNDS = 40;

describe("races on a worker's generation", () => {
  it("a registration against a publish of the generation it fences: never a session left open on a fenced one", async () => {
    const owner = await streamer(t);
    const worker = await FakeWorker.of(t);
    await worker.register();
    const outcomes = { granted: 0, fenced: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      const { id, key } = await owner.stream({ title: `Fence ${round}` });
      const old = worker.as(worker.generation);
      const [grant] = await Promise.all([
        old.authorize(key).then(
          (answer) => answer,
          () => undefined,
        ),
        worker.register(),
      ]);
      if (grant?.granted) outcomes.granted++;
      else outcomes.fenced++;
      const open = (await owner.call("GET", `/sessions?stream_id=${id}&state=open`)).body.sessions ?? [];
      expect(open, `round ${round}`).toEqual([]);
      if (grant?.granted) {
        const session = (await owner.call("GET", `/sessions/${grant.sessionId}`)).body.session;
        expect(session, `round ${round}`).toMatchObject({ state: "interrupted", end_reason: "worker_lost" });
      }
    }
    expect(outcomes.granted + outcomes.fenced).toBe(ROUNDS);
  });
});
