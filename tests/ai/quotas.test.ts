import { describe, expect, it } from "vitest";
import type { AiContext } from "../../services/ai/context.js";
import { countCacheHit, reserveCall, type QuotaSubjects } from "../../services/ai/db/quotas.js";
import { retryAfterSeconds, windowAt } from "../../services/ai/domain/quota-scopes.js";
import { sweepAi } from "../../services/ai/workers/sweep.js";
import { sql } from "../../services/kit/db/sql.js";
import { problemOf } from "../../services/kit/handler/problem.js";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { usePlatform } from "../support/platform.js";

// 30 seconds into a minute: the clock stands still, so no window ends between the calls of a test.
const clock = new ManualClock(new Date("2027-04-01T10:00:30Z"));
const t = usePlatform({ services: ["ai"], clock });
const ctx = () => t.platform.contexts.get("ai") as AiContext;

const manager = () => t.token({ kind: "service", sub: "svc:ops", caps: ["ai.provider.manage", "ai.usage.read"] });
const setQuota = async (body: Record<string, unknown>) =>
  t.http("POST", "/ai/api/v1/quotas", { token: await manager(), body });
const quotas = async (query: string) =>
  (await t.http("GET", `/ai/api/v1/quotas?${query}`, { token: await manager() })).body.quotas as Record<
    string,
    unknown
  >[];

const trade: QuotaSubjects = { namespace: "trade", caller: "svc:trade", model: "local/extractive" };

/** An error as its problem's status, code and extensions. */
const problemFields = (error: unknown) => {
  const problem = problemOf(error);
  return { status: problem.status, code: problem.code, ...problem.extensions };
};

/** What a refused promise was refused with, as its problem. */
const refusal = async (promise: Promise<unknown>) =>
  problemFields(
    await promise.then(
      () => expect.fail("was not refused"),
      (error: unknown) => error,
    ),
  );

describe("quota windows", () => {
  it("are fixed from the epoch in UTC, and say when a refused call may try again", () => {
    const at = new Date("2027-04-01T10:59:59.250Z");
    expect(windowAt("minute", at)).toEqual({
      start: new Date("2027-04-01T10:59:00Z"),
      end: new Date("2027-04-01T11:00:00Z"),
    });
    expect(windowAt("day", at).start).toEqual(new Date("2027-04-01T00:00:00Z"));
    expect(retryAfterSeconds("hour", at)).toBe(1);
    expect(retryAfterSeconds("day", new Date("2027-04-01T00:00:00Z"))).toBe(86_400);
  });
});

describe("quotas before any provider call", () => {
  it("let exactly 3 of 10 concurrent calls through a quota of 3 requests: the rest are 429 with the window", async () => {
    const set = await setQuota({ scope: "namespace", subject: "trade", window: "minute", max_requests: 3 });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body.quota).toMatchObject({ scope: "namespace", subject: "trade", window: "minute", max_requests: 3 });
    const answers = await Promise.allSettled(Array.from({ length: 10 }, () => reserveCall(ctx(), trade, 10)));
    expect(answers.filter((answer) => answer.status === "fulfilled")).toHaveLength(3);
    const refused = answers.filter((answer) => answer.status === "rejected");
    expect(refused).toHaveLength(7);
    expect(problemFields(refused[0].reason)).toMatchObject({
      status: 429,
      code: "ai.quota_exceeded",
      scope: "namespace",
      subject: "trade",
      window: "minute",
      retry_after_seconds: 30,
    });
    const [namespace] = await quotas("namespace=trade");
    expect(namespace).toMatchObject({ subject: "trade", used_requests: 3, used_tokens: 0 });
    expect(namespace.window_start).toBe("2027-04-01T10:00:00Z");
    expect(namespace.window_end).toBe("2027-04-01T10:01:00Z");
    // The seeded quotas of every caller alike count the caller's 3 requests and 30 tokens too.
    const byCaller = await quotas("caller=svc:trade");
    expect(byCaller.map((quota) => [quota.window, quota.used_requests, quota.used_tokens])).toEqual([
      ["day", 0, 30],
      ["minute", 3, 0],
    ]);
  });

  it("settles a call's tokens to what it used, releases a call never made, and opens the next window", async () => {
    const [first, second] = await Promise.all([
      reserveCall(ctx(), { ...trade, namespace: "news" }, 10),
      reserveCall(ctx(), { ...trade, namespace: "news" }, 10),
    ]);
    await first.settle(25);
    await second.release();
    await second.release();
    const [day] = (await quotas("caller=svc:trade")).filter((quota) => quota.window === "day");
    expect(day.used_tokens).toBe(30 + 25);
    clock.advance(30_000);
    const next = await reserveCall(ctx(), trade, 5);
    const [namespace] = await quotas("namespace=trade");
    expect(namespace).toMatchObject({ used_requests: 1, window_start: "2027-04-01T10:01:00Z" });
    await next.release();
  });

  it("counts nothing anywhere when one quota refuses, whichever it is", async () => {
    const set = await setQuota({ scope: "model", subject: "local/extractive", window: "hour", max_tokens: 100 });
    expect(set.status).toBe(200);
    const before = await quotas("caller=svc:big");
    expect(await refusal(reserveCall(ctx(), { ...trade, caller: "svc:big" }, 101))).toMatchObject({
      code: "ai.quota_exceeded",
      scope: "model",
      subject: "local/extractive",
      window: "hour",
      retry_after_seconds: 59 * 60,
    });
    expect(await quotas("caller=svc:big")).toEqual(before);
    const [model] = (await quotas("")).filter((quota) => quota.scope === "model");
    expect(model).toMatchObject({ used_requests: 0, used_tokens: 0 });
  });

  it("counts a cache hit as one request and no tokens, and refuses it as a call once the requests are spent", async () => {
    const reviews = { ...trade, namespace: "reviews", caller: "svc:reviews" };
    await setQuota({ scope: "namespace", subject: "reviews", window: "minute", max_requests: 1 });
    await countCacheHit(ctx(), reviews);
    const counted = async () =>
      [...(await quotas("caller=svc:reviews")), ...(await quotas("namespace=reviews"))].map((quota) => [
        quota.window,
        quota.used_requests,
        quota.used_tokens,
      ]);
    const once = [
      ["day", 0, 0],
      ["minute", 1, 0],
      ["minute", 1, 0],
    ];
    expect(await counted()).toEqual(once);
    expect(await refusal(countCacheHit(ctx(), reviews))).toMatchObject({
      code: "ai.quota_exceeded",
      subject: "reviews",
    });
    expect(await counted()).toEqual(once);
  });
});

describe("the sweep", () => {
  it("gives back what a call lost with its process held, once untouched for an hour", async () => {
    const lost = { ...trade, namespace: "lost", caller: "svc:lost" };
    await reserveCall(ctx(), lost, 50);
    const tokens = async () => (await quotas("caller=svc:lost")).find((quota) => quota.window === "day")!.used_tokens;
    expect(await tokens()).toBe(50);
    clock.advance(3_600_000);
    await sweepAi(ctx());
    expect(await tokens()).toBe(50);
    clock.advance(1);
    await sweepAi(ctx());
    expect(await tokens()).toBe(0);
  });
});

describe("setting quotas", () => {
  it("replaces the limits of the same scope, subject and window, audited with the actor, before and after", async () => {
    const first = await setQuota({ scope: "caller", subject: "svc:news", window: "day", max_requests: 7 });
    const again = await setQuota({ scope: "caller", subject: "svc:news", window: "day", max_tokens: 900 });
    expect(again.status).toBe(200);
    expect(again.body.quota).toMatchObject({ id: first.body.quota.id, max_requests: 0, max_tokens: 900 });
    const audit = await sql<{ actor: string; action: string; before: unknown; after: unknown }>(
      ctx().orm.em.fork(),
      `select actor, action, before, after from {audit_log} where target_key = ? order by at, id`,
      [first.body.quota.id],
    );
    expect(audit).toEqual([
      expect.objectContaining({ actor: "svc:ops", action: "quota.set", before: null }),
      expect.objectContaining({
        before: expect.objectContaining({ max_requests: 7, max_tokens: 0 }),
        after: expect.objectContaining({ max_requests: 0, max_tokens: 900, subject: "svc:news", window: "day" }),
      }),
    ]);
  });

  it("names a missing scope, subject or window, and refuses a token without the capability", async () => {
    for (const [body, field] of [
      [{ subject: "x", window: "day" }, "scope"],
      [{ scope: "caller", window: "day" }, "subject"],
      [{ scope: "caller", subject: "x" }, "window"],
      [{ scope: "model", subject: "extractive", window: "day" }, "subject"],
    ] as const) {
      const answer = await setQuota(body);
      expect([answer.status, answer.body.code, answer.body.field]).toEqual([400, "request.invalid", field]);
    }
    const reader = await t.token({ kind: "service", sub: "svc:reader", caps: ["ai.usage.read"] });
    const body = { scope: "caller", subject: "x", window: "day", max_requests: 1 };
    expect((await t.http("POST", "/ai/api/v1/quotas", { token: reader, body })).status).toBe(403);
    const nobody = await t.token({ kind: "service", sub: "svc:nobody", caps: [] });
    expect((await t.http("GET", "/ai/api/v1/quotas", { token: nobody })).status).toBe(403);
  });
});
