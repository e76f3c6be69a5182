import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JOB_LEASE_MS, leasedJob } from "../../services/kit/runtime/lease.js";
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

  it("hold a lease a crash leaves for seconds, not for the job's period", async () => {
    const ctx = first.platform.contexts.get("network")!;
    let running!: () => void;
    let finish!: () => void;
    const started = new Promise<void>((resolve) => (running = resolve));
    const stop = await leasedJob("hourly", { everyMs: 3_600_000, firstAfterMs: 0 }, async () => {
      running();
      await new Promise<void>((done) => (finish = done));
    })(ctx);
    await started;
    const [lease] = await ctx.orm.em
      .getConnection()
      .execute<{ left_ms: number }[]>(
        `select extract(epoch from until - now()) * 1000 as left_ms from network.leases where name = 'hourly'`,
      );
    finish();
    await stop();
    // An instance killed now would hold the hourly job for at most JOB_LEASE_MS (it was twice the period).
    expect(Number(lease.left_ms)).toBeGreaterThan(0);
    expect(Number(lease.left_ms)).toBeLessThanOrEqual(JOB_LEASE_MS);
  });
});
