import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JOB_LEASE_MS, leasedJob } from "../../services/kit/service/lease.js";
import { leaseTries } from "../support/lease-tries.js";
import { startTestPlatform, type TestPlatform } from "../support/platform.js";
import { until } from "../support/until.js";

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

/**
 * Resolves once `platform` has tried to take the lease again after this moment (and, the lease held, failed),
 * or the test is stopping the jobs (a stopped instance tries no more).
 */
async function untilTriedBy(platform: TestPlatform, name: string, stopping: () => boolean): Promise<void> {
  const network = platform.platform.contexts.get("network")!;
  const before = leaseTries(network, name);
  await until(() => stopping() || leaseTries(network, name) > before + 1);
}

describe("leased background jobs", () => {
  it("never run on two instances at once", async () => {
    const passes: { instance: string; start: number; end: number }[] = [];
    let stopping = false;
    const job = (instance: string) =>
      leasedJob("sweep", { everyMs: 10 }, async () => {
        const start = performance.now();
        // Held until the other instance has tried to run it meanwhile.
        await untilTriedBy(instance === "first" ? second : first, "sweep", () => stopping);
        passes.push({ instance, start, end: performance.now() });
      });
    const stops = await Promise.all([
      job("first")(first.platform.contexts.get("network")!),
      job("second")(second.platform.contexts.get("network")!),
    ]);
    await until(() => passes.length > 5);
    stopping = true;
    await Promise.all(stops.map((stop) => stop()));
    const ordered = [...passes].sort((a, b) => a.start - b.start);
    for (let i = 1; i < ordered.length; i++) expect(ordered[i].start).toBeGreaterThanOrEqual(ordered[i - 1].end);
  });

  it("keep the lease while a run takes longer than the lease itself", async () => {
    const runs: { instance: string; start: number; end: number }[] = [];
    let stopping = false;
    const job = (instance: string) =>
      leasedJob("long-sweep", { everyMs: 20, leaseMs: 150 }, async (ctx) => {
        const start = performance.now();
        // Held past the end of the lease first taken, then until the other instance has tried to take it.
        const [taken] = await ctx.orm.em
          .getConnection()
          .execute<{ until: string }[]>(`select until::text from network.leases where name = 'long-sweep'`);
        await until(async () => {
          const [lapsed] = await ctx.orm.em
            .getConnection()
            .execute<{ lapsed: boolean }[]>("select now() > ?::timestamptz as lapsed", [taken.until]);
          return lapsed.lapsed;
        });
        await untilTriedBy(instance === "first" ? second : first, "long-sweep", () => stopping);
        runs.push({ instance, start, end: performance.now() });
      });
    const stops = await Promise.all([
      job("first")(first.platform.contexts.get("network")!),
      job("second")(second.platform.contexts.get("network")!),
    ]);
    await until(() => runs.length > 0);
    stopping = true;
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
    // It tried while the lease was held (the crashed instance's lease lasts 400 ms), and did not run.
    await until(async () => {
      const [held] = await ctx.orm.em
        .getConnection()
        .execute<{ held: boolean }[]>(`select until > now() as held from network.leases where name = 'expiry'`);
      return leaseTries(ctx, "expiry") > 1 && held.held;
    });
    expect(ran).toBe(0);
    await until(() => ran > 0);
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
