import type { EntityManager } from "@mikro-orm/postgresql";
import { describe, expect, it } from "vitest";
import { problem, problemOf } from "../../services/kit/handler/problem.js";
import { expireReservations, reserve, spend, type Quota } from "../../services/kit/quotas/quotas.js";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { pruneKitTables } from "../../services/kit/service/housekeeping.js";
import { usePlatform } from "../support/platform.js";
import { DATABASE_SERVER, itWith } from "../support/skips.js";
import { until } from "../support/until.js";

const clock = new ManualClock(new Date("2030-03-01T12:00:30Z"));
const t = usePlatform({ services: ["network"], clock });

const MINUTE = 60_000;
const network = () => t.platform.contexts.get("network")!;
const quota = (name: string, limit: number, more: Partial<Quota> = {}): Quota => ({
  name,
  limit,
  expireAfterMs: MINUTE,
  ...more,
});

/** A reservation's refusal as a problem, or undefined when it was granted. */
const refusalOf = (work: Promise<unknown>) =>
  work.then(
    () => undefined,
    (error: unknown) => problemOf(error),
  );

/** What the quota's counters hold for the key, window by window, and its reservations' units. */
async function state(name: string, key: string) {
  const connection = network().orm.em.getConnection();
  const used = await connection.execute<{ used: string }[]>(
    `select used from network.quota_usage where name = ? and key = ? order by window_start`,
    [name, key],
  );
  const reserved = await connection.execute<{ units: string }[]>(
    `select units from network.quota_reservations where name = ? and key = ? order by units`,
    [name, key],
  );
  return { used: used.map((row) => Number(row.used)), reserved: reserved.map((row) => Number(row.units)) };
}

/** True once another transaction waits for a lock this one holds. */
async function queuedBehind(em: EntityManager): Promise<boolean> {
  const [row] = await em
    .getConnection()
    .execute<{ n: number }[]>(
      "select count(*)::int as n from pg_locks where not granted and pg_backend_pid() = any(pg_blocking_pids(pid))",
      [],
      "all",
      em.getTransactionContext(),
    );
  return row.n > 0;
}

describe("quotas", () => {
  // A race of row locks: the embedded database runs one transaction at a time, so none would ever queue.
  itWith(DATABASE_SERVER, "let exactly floor(limit / units) of many concurrent reservations through", async () => {
    const tokens = quota("test.concurrent", 10);
    // Each reservation granted holds its counter until another one queues behind it (or none is left).
    let answered = 0;
    const attempt = () =>
      refusalOf(
        network().transaction(async (em) => {
          await reserve(network(), tokens, "usr_1", 3, { em });
          await until(async () => answered === 19 || (await queuedBehind(em)));
        }),
      ).finally(() => answered++);
    const answers = await Promise.all(Array.from({ length: 20 }, attempt));
    expect(answers.filter((answer) => answer === undefined)).toHaveLength(3);
    expect(answers.filter((answer) => answer?.code === "quota.exceeded")).toHaveLength(17);
    expect(await state("test.concurrent", "usr_1")).toEqual({ used: [9], reserved: [3, 3, 3] });
  });

  it("refuse with a 429 naming the quota, counting nothing, also in the caller's transaction", async () => {
    const cost = quota("test.refused", 10);
    await reserve(network(), cost, "usr_1", 8);
    expect(await refusalOf(reserve(network(), cost, "usr_1", 3))).toMatchObject({
      status: 429,
      code: "quota.exceeded",
      extensions: { quota: "test.refused", limit: 10 },
    });
    // Refused in a transaction holding another reservation: that one is rolled back with it.
    const other = quota("test.refused.other", 10);
    const both = network().transaction(async (em) => {
      await reserve(network(), other, "usr_1", 5, { em });
      await reserve(network(), cost, "usr_1", 3, { em });
    });
    expect(await refusalOf(both)).toMatchObject({ status: 429, extensions: { quota: "test.refused" } });
    expect(await state("test.refused", "usr_1")).toEqual({ used: [8], reserved: [8] });
    expect(await state("test.refused.other", "usr_1")).toEqual({ used: [], reserved: [] });
    // A quota's own refusal (media's 413) replaces the kit's.
    const storage = quota("test.refused.storage", 1, {
      refused: (key) => problem(413, "test.storage_full", `${key} is full.`),
    });
    expect(await refusalOf(reserve(network(), storage, "app_1", 2))).toMatchObject({
      status: 413,
      code: "test.storage_full",
    });
  });

  it("return what a settlement does not use, and what a release held", async () => {
    const cost = quota("test.settle", 10);
    const first = await reserve(network(), cost, "usr_1", 8);
    await first.settle(5);
    expect(await state("test.settle", "usr_1")).toEqual({ used: [5], reserved: [] });
    const second = await reserve(network(), cost, "usr_1", 5);
    expect(await refusalOf(reserve(network(), cost, "usr_1", 1))).toMatchObject({ code: "quota.exceeded" });
    await second.release();
    await second.release();
    expect(await state("test.settle", "usr_1")).toEqual({ used: [5], reserved: [] });
    // Settled past what it held: the work is done, so it counts, and the next reservation meets it.
    const third = await reserve(network(), cost, "usr_1", 1);
    await third.settle(4);
    expect(await state("test.settle", "usr_1")).toEqual({ used: [9], reserved: [] });
  });

  it("reserve ahead while the quota leaves it, else exactly what is needed", async () => {
    const bytes = quota("test.ahead", 10);
    const upload = await reserve(network(), bytes, "app_1", 1, { ahead: 4 });
    expect(upload.units).toBe(4);
    await upload.more(3, { ahead: 4 });
    expect(upload.units).toBe(8);
    await upload.more(2, { ahead: 4 });
    expect(upload.units).toBe(10);
    expect(await refusalOf(upload.more(1))).toMatchObject({ code: "quota.exceeded" });
    expect(await state("test.ahead", "app_1")).toEqual({ used: [10], reserved: [10] });
  });

  it("count per fixed window, refusing with the seconds left in it, and roll over", async () => {
    const tokens = quota("test.window", 5, { windowMs: MINUTE });
    const early = await reserve(network(), tokens, "usr_1", 5);
    expect(await refusalOf(reserve(network(), tokens, "usr_1", 1))).toMatchObject({
      status: 429,
      extensions: { quota: "test.window", retry_after_seconds: 30 },
    });
    clock.set(new Date("2030-03-01T12:01:00Z"));
    const late = await reserve(network(), tokens, "usr_1", 5);
    // Settled in the next window, the first reservation still returns to its own.
    await early.settle(2);
    expect(await refusalOf(reserve(network(), tokens, "usr_1", 1))).toMatchObject({ code: "quota.exceeded" });
    await late.release();
    expect(await state("test.window", "usr_1")).toEqual({ used: [2, 0], reserved: [] });
  });

  it("expire reservations left unsettled, a holder's together, and return their units", async () => {
    clock.set(new Date("2030-03-02T12:00:00Z"));
    const files = quota("test.expiry.files", 10);
    const bytes = quota("test.expiry.bytes", 100);
    const hold = async (holder: string) => ({
      files: await reserve(network(), files, "app_1", 1, { holder }),
      bytes: await reserve(network(), bytes, "app_1", 10, { holder }),
    });
    const crashed = await hold("crashed");
    const live = await hold("live");
    clock.advance(MINUTE / 2);
    // The live holder's bytes grow: its file's reservation, untouched itself, lives on with them.
    await live.bytes.more(10);
    clock.advance(MINUTE);
    const cleaned: string[] = [];
    await expireReservations(network(), [files, bytes], async (holder) => {
      cleaned.push(holder);
    });
    expect([...new Set(cleaned)]).toEqual(["crashed"]);
    expect(await state("test.expiry.files", "app_1")).toEqual({ used: [1], reserved: [1] });
    expect(await state("test.expiry.bytes", "app_1")).toEqual({ used: [20], reserved: [20] });
    // Expired: it can no longer settle or grow (408), and releasing it gives nothing back twice.
    expect(await refusalOf(crashed.files.settle(1))).toMatchObject({ status: 408, code: "request.timeout" });
    expect(await refusalOf(crashed.bytes.more(1))).toMatchObject({ status: 408 });
    await crashed.bytes.release();
    await live.files.settle(1);
    await live.bytes.settle(15);
    expect(await state("test.expiry.bytes", "app_1")).toEqual({ used: [15], reserved: [] });
  });

  it("keep a holder's reservations when its clean-up fails, for the next pass", async () => {
    const bytes = quota("test.expiry.failing", 100);
    await reserve(network(), bytes, "app_1", 10, { holder: "stuck" });
    clock.advance(2 * MINUTE);
    const failing = expireReservations(network(), [bytes], () => Promise.reject(new Error("store down")));
    await expect(failing).rejects.toThrow("store down");
    expect(await state("test.expiry.failing", "app_1")).toEqual({ used: [10], reserved: [10] });
    await expireReservations(network(), [bytes], async () => undefined);
    expect(await state("test.expiry.failing", "app_1")).toEqual({ used: [0], reserved: [] });
  });

  it("prune ended windows a day later, never one a reservation still counts in", async () => {
    clock.set(new Date("2030-03-05T12:00:00Z"));
    const tokens = quota("test.prune", 5, { windowMs: MINUTE });
    await reserve(network(), tokens, "usr_1", 1);
    clock.advance(MINUTE);
    await (await reserve(network(), tokens, "usr_1", 2)).settle(2);
    clock.advance(2 * 86_400_000);
    await pruneKitTables(network());
    expect(await state("test.prune", "usr_1")).toEqual({ used: [1], reserved: [1] });
  });

  itWith(
    DATABASE_SERVER,
    "spend in one statement: exactly floor(limit / units) of many concurrent spends count",
    async () => {
      clock.set(new Date("2030-03-06T12:00:00Z"));
      const tokens = quota("test.spend", 10, { windowMs: 3_600_000 });
      const outcomes = await Promise.all(
        Array.from({ length: 8 }, () => refusalOf(spend(network(), tokens, "usr_1", 3))),
      );
      expect(outcomes.filter((outcome) => outcome === undefined)).toHaveLength(3);
      for (const refused of outcomes.filter((outcome) => outcome !== undefined))
        expect(refused).toMatchObject({ status: 429, code: "quota.exceeded" });
      expect(await state("test.spend", "usr_1")).toEqual({ used: [9], reserved: [] });
    },
  );

  it("spend nothing past the limit, even on a key's first spend, and give back once", async () => {
    clock.set(new Date("2030-03-07T12:00:00Z"));
    const tokens = quota("test.spend.back", 4, { windowMs: 3_600_000 });
    expect(await refusalOf(spend(network(), tokens, "usr_2", 5))).toMatchObject({ status: 429 });
    expect(await state("test.spend.back", "usr_2")).toEqual({ used: [], reserved: [] });
    const spent = await spend(network(), tokens, "usr_2", 4);
    expect(await refusalOf(spend(network(), tokens, "usr_2", 1))).toMatchObject({ status: 429 });
    await spent.giveBack();
    await spent.giveBack();
    expect(await state("test.spend.back", "usr_2")).toEqual({ used: [0], reserved: [] });
    await spend(network(), tokens, "usr_2", 1);
    expect(await state("test.spend.back", "usr_2")).toEqual({ used: [1], reserved: [] });
  });
});
