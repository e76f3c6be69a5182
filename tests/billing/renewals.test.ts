import { beforeAll, describe, expect, it } from "vitest";
import { sweepRenewals } from "../../services/billing/workers/renewals.js";
import { addPaidPeriod } from "../../services/billing/db/subscriptions.js";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { startTestPlatform, usePlatform, type TestPlatform } from "../support/platform.js";
import { eventsAbout, setFrozen } from "./checks.js";
import { billingOf, fund, person } from "./support.js";

const clock = new ManualClock(new Date("2026-03-01T00:00:00Z"));
// Sweeps run when a test asks; the leased job's own schedule is tested on a platform of its own below.
const t = usePlatform({ services: ["billing"], clock, env: { PF_BILLING_SWEEP_EVERY_MS: "2000000000" } });
const PERIOD_MS = 30 * 86_400_000;
const PRICE = 499n;

let admin: string;
let manager: string;
let checker: string;
let reader: string;
let lister: string;

beforeAll(async () => {
  admin = await t.token({ kind: "service", svc: "ops", caps: ["billing.ledger.admin"] });
  manager = await t.token({ kind: "service", svc: "vip", caps: ["billing.subscription.manage"] });
  checker = await t.token({ kind: "service", svc: "vip", caps: ["billing.entitlement.check"] });
  reader = await t.token({ kind: "service", svc: "tips", caps: ["billing.balance.read"] });
  lister = await t.token({
    kind: "service",
    svc: "vip",
    caps: ["billing.entitlement.check", "billing.subscription.manage"],
  });
});

const sweep = () => t.http("POST", "/billing/api/v1/admin/sweep", { token: admin, body: {} });
/** Times as proto JSON writes them (RFC 3339, fractions only when present). */
const rfc3339 = (at: Date | number) => new Date(at).toISOString().replace(".000Z", "Z");
type Subscribed = { fan: string; streamer: string; id: string };
const credit = async (subject: string) =>
  (await t.http("GET", `/billing/api/v1/balances/${subject}`, { token: reader })).body.balances[0].spendable_credit;
const entitled = async (s: Subscribed) =>
  (await t.http("GET", `/billing/api/v1/entitlements/${s.fan}?streamer=${s.streamer}`, { token: checker })).body
    .entitlements.length === 1;
/** The subscription as the subscriptions read answers it, ended or not. */
const read = async (p: TestPlatform, token: string, s: Subscribed) =>
  (
    await p.http(
      "GET",
      `/billing/api/v1/subscriptions?view=SUBSCRIPTION_VIEW_SUBSCRIPTIONS&include_ended=true&subject=${s.fan}&streamer=${s.streamer}`,
      { token },
    )
  ).body.subscriptions.subscriptions[0];
const subscription = (s: Subscribed) => read(t, lister, s);

/** A fan with `funds` of credit subscribed from credit (tier_1) to a fresh streamer. */
async function subscribedFromCredit(p: TestPlatform, funds: bigint, token = manager): Promise<Subscribed> {
  const [fan, streamer] = [person("fan"), person("st")];
  await fund(p, fan, funds);
  const answer = await p.http("POST", "/billing/api/v1/subscriptions", {
    token,
    body: { subject: fan, streamer, plan_id: "pln_1", plan_version: 1, idempotency_key: `s-${fan}` },
  });
  expect(answer.status).toBe(201);
  return { fan, streamer, id: answer.body.subscription.id };
}

/** A subscription bought through a payment intent: one period, as the payments flow records it. */
async function subscribedByIntent(): Promise<Subscribed> {
  const [fan, streamer] = [person("fan"), person("st")];
  const ctx = billingOf(t);
  const row = await ctx.transaction((em) =>
    addPaidPeriod(em, {
      subject: fan,
      streamer,
      planId: "pln_1",
      planVersion: 1n,
      tier: "tier_1",
      currency: "USD",
      price: PRICE,
      paidVia: "intent",
      periodMs: PERIOD_MS,
      at: clock.now(),
    }),
  );
  await fund(t, fan, 10_000n); // credit on hand does not renew an intent-paid period
  return { fan, streamer, id: row.id };
}

describe("the renewal sweep", () => {
  it("renews from credit, ends when credit is short, ends canceled and intent-paid ones, and leaves the rest", async () => {
    const renews = await subscribedFromCredit(t, 2n * PRICE);
    const short = await subscribedFromCredit(t, PRICE + 100n);
    const canceled = await subscribedFromCredit(t, 10n * PRICE);
    await t.http("POST", `/billing/api/v1/subscriptions/${canceled.id}/cancel`, { token: manager, body: {} });
    const byIntent = await subscribedByIntent();
    clock.advance(PERIOD_MS / 2);
    const later = await subscribedFromCredit(t, PRICE);

    for (const s of [renews, short, canceled, byIntent, later]) expect(await entitled(s)).toBe(true);
    clock.advance(PERIOD_MS / 2);
    for (const s of [renews, short, canceled, byIntent]) expect(await entitled(s)).toBe(false);

    const answer = await sweep();
    expect(answer.status).toBe(200);
    expect(answer.body.sweep).toEqual({ ran_at: rfc3339(clock.now()), renewed: "1", ended: "3" });

    expect(await entitled(renews)).toBe(true);
    expect(await subscription(renews)).toMatchObject({
      status: "SUBSCRIPTION_STATUS_ACTIVE",
      periods: 2,
      valid_until: rfc3339(clock.now().getTime() + PERIOD_MS),
    });
    expect(await credit(renews.fan)).toBe("0");
    const history = await t.http("GET", `/billing/api/v1/balances/${renews.fan}/transactions`, { token: reader });
    expect(history.body.transactions[0]).toMatchObject({
      kind: "TRANSACTION_KIND_SUBSCRIPTION",
      reference: { service: "billing", kind: "subscription", id: renews.id },
      created_by: "svc:ops",
    });

    for (const s of [short, canceled, byIntent]) {
      expect(await entitled(s)).toBe(false);
      const ended = await subscription(s);
      expect(ended).toMatchObject({ status: "SUBSCRIPTION_STATUS_ENDED", ended_at: ended.valid_until });
    }
    expect(await credit(short.fan)).toBe("100");
    expect(await credit(canceled.fan)).toBe(String(9n * PRICE));
    expect(await credit(byIntent.fan)).toBe("10000");
    expect(await entitled(later)).toBe(true);
    expect(await subscription(later)).toMatchObject({ status: "SUBSCRIPTION_STATUS_ACTIVE", periods: 1 });

    expect(await eventsAbout(t, renews.id)).toEqual(["billing.entitlement.changed", "billing.entitlement.changed"]);
    expect((await sweep()).body.sweep).toMatchObject({ renewed: "0", ended: "0" });
  });

  it("catches up a sweep more than a period late: each period starts at the last one's end", async () => {
    const s = await subscribedFromCredit(t, 3n * PRICE);
    const started = clock.now().getTime();
    clock.advance(2.5 * PERIOD_MS);
    await sweep();
    expect(await subscription(s)).toMatchObject({
      status: "SUBSCRIPTION_STATUS_ACTIVE",
      periods: 3,
      valid_until: rfc3339(started + 3 * PERIOD_MS),
    });
    expect(await credit(s.fan)).toBe("0");
    expect(await entitled(s)).toBe(true);
  });

  it("does nothing while the economy is frozen (RunSweep answers 409 economy.frozen), and catches up after the thaw", async () => {
    const s = await subscribedFromCredit(t, 2n * PRICE);
    clock.advance(PERIOD_MS);
    await setFrozen(t, true);
    try {
      const refused = await sweep();
      expect(refused.status).toBe(409);
      expect(refused.body.code).toBe("economy.frozen");
      expect(await sweepRenewals(billingOf(t))).toEqual({ renewed: 0, ended: 0 });
      expect(await subscription(s)).toMatchObject({ status: "SUBSCRIPTION_STATUS_ACTIVE", periods: 1 });
    } finally {
      await setFrozen(t, false);
    }
    expect((await sweep()).status).toBe(200);
    expect(await subscription(s)).toMatchObject({ status: "SUBSCRIPTION_STATUS_ACTIVE", periods: 2 });
  });

  it("charges each period once under two concurrent sweeps", async () => {
    const subs = [];
    for (let i = 0; i < 12; i++) subs.push(await subscribedFromCredit(t, 2n * PRICE));
    clock.advance(PERIOD_MS);
    const ctx = billingOf(t);
    const [a, b] = await Promise.all([sweepRenewals(ctx), sweepRenewals(ctx)]);
    expect(a.renewed + b.renewed).toBeGreaterThanOrEqual(subs.length);
    for (const s of subs) {
      expect(await subscription(s)).toMatchObject({ status: "SUBSCRIPTION_STATUS_ACTIVE", periods: 2 });
      expect(await credit(s.fan)).toBe("0");
    }
  });
});

describe("the leased job", () => {
  it("sweeps on its own every PF_BILLING_SWEEP_EVERY_MS", async () => {
    const ownClock = new ManualClock(new Date("2026-03-01T00:00:00Z"));
    const p = await startTestPlatform({
      services: ["billing"],
      clock: ownClock,
      env: { PF_BILLING_SWEEP_EVERY_MS: "100" },
    });
    try {
      const token = await p.token({ kind: "service", svc: "vip", caps: ["billing.subscription.manage"] });
      const s = await subscribedFromCredit(p, PRICE, token);
      ownClock.advance(PERIOD_MS);
      const check = await p.token({
        kind: "service",
        svc: "vip",
        caps: ["billing.entitlement.check", "billing.subscription.manage"],
      });
      await expect
        .poll(async () => (await read(p, check, s)).status, { timeout: 5000, interval: 100 })
        .toBe("SUBSCRIPTION_STATUS_ENDED");
    } finally {
      await p.stop();
    }
  });
});
