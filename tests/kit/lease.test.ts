import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { leasedJob } from "../../services/kit/runtime/lease.js";
import { startTestPlatform, type TestPlatform } from "../support/platform.js";

let first: TestPlatform;
let second: TestPlatform;
beforeAll(async () => {
  first = await startTestPlatform({ services: ["network"] });
  // A second instance of the same service on the same database.
  second = await startTestPlatform({ services: ["network"], env: { DATABASE_URL: first.platform.databaseUrl } });
});
afterAll(async () => {
  await second?.stop();
  await first?.stop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("leased background jobs", () => {
  it("never run on two instances at once", async () => {
    const passes: { instance: string; start: number; end: number }[] = [];
    const job = (instance: string) =>
      leasedJob("sweep", { everyMs: 10 }, async () => {
        const start = performance.now();
        await sleep(15);
        passes.push({ instance, start, end: performance.now() });
      });
    const stops = await Promise.all([
      job("first")(first.platform.contexts.get("network")!),
      job("second")(second.platform.contexts.get("network")!),
    ]);
    await sleep(600);
    await Promise.all(stops.map((stop) => stop()));
    expect(passes.length).toBeGreaterThan(5);
    const ordered = [...passes].sort((a, b) => a.start - b.start);
    for (let i = 1; i < ordered.length; i++) expect(ordered[i].start).toBeGreaterThanOrEqual(ordered[i - 1].end);
  });

  it("keep the lease while a run takes longer than the lease itself", async () => {
    const runs: { instance: string; start: number; end: number }[] = [];
    const job = (instance: string) =>
      leasedJob("long-sweep", { everyMs: 20, leaseMs: 150 }, async () => {
        const start = performance.now();
        await sleep(400);
        runs.push({ instance, start, end: performance.now() });
      });
    const stops = await Promise.all([
      job("first")(first.platform.contexts.get("network")!),
      job("second")(second.platform.contexts.get("network")!),
    ]);
    await sleep(1_000);
    await Promise.all(stops.map((stop) => stop()));
    const ordered = [...runs].sort((a, b) => a.start - b.start);
    expect(ordered.length).toBeGreaterThan(0);
    for (let i = 1; i < ordered.length; i++) expect(ordered[i].start).toBeGreaterThanOrEqual(ordered[i - 1].end);
  });

  it("wait out a lease another instance holds until it lapses", async () => {
    const ctx = first.platform.contexts.get("network")!;
    await ctx.orm.em
      .getConnection()
      .execute(
        `insert into network.leases (name, holder, until) values ('expiry', 'crashed-instance', now() + interval '400 milliseconds')`,
      );
    let ran = 0;
    const stop = await leasedJob("expiry", { everyMs: 20 }, async () => void ran++)(ctx);
    await sleep(250);
    expect(ran).toBe(0);
    await sleep(400);
    await stop();
    expect(ran).toBeGreaterThan(0);
  });
});
