import { createContextValues, type UnaryRequest } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import { describe, expect, it } from "vitest";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { pruneKitTables } from "../../services/kit/service/housekeeping.js";
import { problem, problemOf } from "../../services/kit/handler/problem.js";
import { rateLimit, rateLimitedCall, type RateRule } from "../../services/kit/writes/rate-limit.js";
import { callScope, currentCall } from "../../services/kit/runtime/call.js";
import { usePlatform } from "../support/platform.js";
import { until, untilPast } from "../support/until.js";
import { DATABASE_SERVER, itWith } from "../support/skips.js";

const clock = new ManualClock(new Date("2030-03-01T12:00:30Z"));
const t = usePlatform({ services: ["network"], clock });

const MINUTE = 60_000;
const network = () => t.platform.contexts.get("network")!;

/** One request: a transaction that counts its hits, as a handler's would; answers the problem when refused. */
async function hit(rules: RateRule[], at: Date = clock.now(), hold?: (em: EntityManager) => Promise<void>) {
  try {
    await network().transaction(async (em) => {
      await rateLimit(em, rules, at);
      // The rest of the handler's work, holding the counters' locks.
      await hold?.(em);
    });
    return undefined;
  } catch (error) {
    return problemOf(error);
  }
}

async function hits(name: string, key: string): Promise<number[]> {
  const rows = await network()
    .orm.em.getConnection()
    .execute<{ hits: number }[]>(
      `select hits from network.rate_limits where name = ? and key = ? order by window_start`,
      [name, key],
    );
  return rows.map((row) => row.hits);
}

describe("rateLimit", () => {
  it("lets `limit` hits through per fixed window, then answers 429 with the seconds left in the window", async () => {
    const rule = { name: "test.window", key: "usr_1", limit: 2, windowMs: MINUTE };
    expect(await hit([rule])).toBeUndefined();
    expect(await hit([rule])).toBeUndefined();
    const refused = await hit([rule]);
    expect(refused).toMatchObject({
      status: 429,
      code: "rate.limited",
      extensions: { rule: "test.window", retry_after_seconds: 30 },
    });
    // Another key has its own count.
    expect(await hit([{ ...rule, key: "usr_2" }])).toBeUndefined();
    // The window is aligned to the minute: 12:00:59.5 is still in it (1 s left, rounded up), 12:01:00 starts the next.
    expect(await hit([rule], new Date("2030-03-01T12:00:59.500Z"))).toMatchObject({
      extensions: { retry_after_seconds: 1 },
    });
    expect(await hit([rule], new Date("2030-03-01T12:01:00Z"))).toBeUndefined();
    expect(await hits("test.window", "usr_1")).toEqual([2, 1]);
  });

  it("does not count refused requests, for the refusing rule or any other", async () => {
    const person = { name: "test.refused.person", key: "usr_1", limit: 1, windowMs: MINUTE };
    const offer = { name: "test.refused.offer", key: "off_1", limit: 10, windowMs: MINUTE };
    expect(await hit([person, offer])).toBeUndefined();
    for (let i = 0; i < 3; i++)
      expect(await hit([person, offer])).toMatchObject({ status: 429, extensions: { rule: "test.refused.person" } });
    expect(await hits("test.refused.person", "usr_1")).toEqual([1]);
    expect(await hits("test.refused.offer", "off_1")).toEqual([1]);
  });

  it("names the limit that frees last when several refuse", async () => {
    const minute = { name: "test.both.minute", key: "usr_1", limit: 1, windowMs: MINUTE };
    const hour = { name: "test.both.hour", key: "usr_1", limit: 1, windowMs: 60 * MINUTE };
    expect(await hit([minute, hour])).toBeUndefined();
    expect(await hit([minute, hour])).toMatchObject({
      extensions: { rule: "test.both.hour", retry_after_seconds: 3570 },
    });
  });

  // Row locks across sessions need a database server: the embedded one is a single session.
  itWith(DATABASE_SERVER, "lets exactly `limit` of many concurrent requests through", async () => {
    const rule = { name: "test.concurrent", key: "usr_1", limit: 5, windowMs: MINUTE };
    // Each request let through holds the counters' locks until another one queues behind them (or none is left).
    let answered = 0;
    const queuedBehind = async (em: EntityManager) => {
      const [row] = await em
        .getConnection()
        .execute<{ n: number }[]>(
          "select count(*)::int as n from pg_locks where not granted and pg_backend_pid() = any(pg_blocking_pids(pid))",
          [],
          "all",
          em.getTransactionContext(),
        );
      return row.n > 0;
    };
    const hold = (em: EntityManager) => until(async () => answered === 19 || (await queuedBehind(em)));
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => hit([rule], clock.now(), hold).finally(() => answered++)),
    );
    expect(answers.filter((answer) => answer === undefined)).toHaveLength(5);
    expect(answers.filter((answer) => answer?.code === "rate.limited")).toHaveLength(15);
    expect(await hits("test.concurrent", "usr_1")).toEqual([5]);
  });

  it("refuses a rule that could never count", async () => {
    await expect(
      network().transaction((em) =>
        rateLimit(em, [{ name: "test.bad", key: "k", limit: 0, windowMs: MINUTE }], clock.now()),
      ),
    ).rejects.toThrow(/positive integers/);
  });

  it("is pruned by housekeeping a day after its window ended", async () => {
    const rule = { name: "test.prune", key: "usr_1", limit: 5, windowMs: MINUTE };
    await hit([rule], new Date("2030-02-28T12:00:00Z"));
    await hit([rule], new Date("2030-02-28T12:01:00Z"));
    await hit([rule], new Date("2030-02-28T12:02:00Z"));
    clock.set(new Date("2030-03-01T12:01:30Z"));
    await pruneKitTables(network());
    // Only the window that ended (12:01 the day before) more than a day ago is gone.
    expect(await hits("test.prune", "usr_1")).toEqual([1, 1]);
  });
});

describe("rateLimitedCall (a write another service does)", () => {
  const refusedBy = (status: number) => () =>
    Promise.reject(problem(status, "other.refused", "The other service said no."));
  const limited = (rule: RateRule, call: () => Promise<string>) =>
    rateLimitedCall(network(), [rule], clock.now(), call).then(
      (answer) => answer,
      (error: unknown) => problemOf(error)?.status,
    );

  it("counts what the call answered, and gives back what it refused or left unanswered", async () => {
    const rule = { name: "test.call", key: "usr_1", limit: 2, windowMs: MINUTE };
    expect(await limited(rule, async () => "taken")).toBe("taken");
    for (let i = 0; i < 4; i++) {
      expect(await limited(rule, refusedBy(503))).toBe(503);
      expect(await limited(rule, refusedBy(409))).toBe(409);
    }
    expect(await hits("test.call", "usr_1")).toEqual([1]);
    expect(await limited(rule, async () => "taken")).toBe("taken");
    // At the limit, refused before the call is made: nothing to give back.
    let called = false;
    expect(await limited(rule, async () => String((called = true)))).toBe(429);
    expect(called).toBe(false);
    expect(await hits("test.call", "usr_1")).toEqual([2]);
  });

  it("gives the hit back even when the call it serves has run past its deadline", async () => {
    const rule = { name: "test.call.late", key: "usr_1", limit: 1, windowMs: MINUTE };
    const request = {
      header: new Headers(),
      signal: new AbortController().signal,
      contextValues: createContextValues(),
    };
    const served = callScope(100)(async () => {
      // The other service does not answer until after the served call's deadline: no statement of the call may run now.
      const late = async (): Promise<string> => {
        await untilPast(currentCall()!.deadline);
        throw new Error("timeout");
      };
      return (await limited(rule, late)) as never;
    });
    // Answered once the hit is given back (the count committed, so the answer stands though late).
    await served(request as unknown as UnaryRequest).catch(() => undefined);
    expect(await hits("test.call.late", "usr_1")).toEqual([0]);
  });
});
