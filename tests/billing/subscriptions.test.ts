import { beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { usePlatform } from "../support/platform.js";
import { eventsAbout, setFrozen } from "./checks.js";
import { fund, person } from "./support.js";

const clock = new ManualClock(new Date("2026-03-01T00:00:00Z"));
// The background sweep stays out of the way: these tests read subscriptions as the handlers leave them.
const t = usePlatform({ services: ["billing"], clock, env: { PF_BILLING_SWEEP_EVERY_MS: "2000000000" } });
const PERIOD_MS = 30 * 86_400_000;

let manager: string;
let checker: string;
let lister: string;
let reader: string;

beforeAll(async () => {
  manager = await t.token({ kind: "service", svc: "vip", caps: ["billing.subscription.manage"] });
  checker = await t.token({ kind: "service", svc: "vip", caps: ["billing.entitlement.check"] });
  lister = await t.token({
    kind: "service",
    svc: "vip",
    caps: ["billing.entitlement.check", "billing.subscription.manage"],
  });
  reader = await t.token({ kind: "service", svc: "tips", caps: ["billing.balance.read"] });
});

/** Times as proto JSON writes them (RFC 3339, fractions only when present). */
const rfc3339 = (at: Date) => at.toISOString().replace(".000Z", "Z");
const subscribe = (body: Record<string, unknown>, token = manager) =>
  t.http("POST", "/billing/api/v1/subscriptions", { token, body });
const cancel = (id: string, body: Record<string, unknown> = {}) =>
  t.http("POST", `/billing/api/v1/subscriptions/${id}/cancel`, { token: manager, body });
const entitlements = async (subject: string, query = "") => {
  const answer = await t.http("GET", `/billing/api/v1/entitlements/${subject}${query}`, { token: checker });
  expect(answer.status).toBe(200);
  return answer.body.entitlements as { streamer: string; subscription_id: string; valid_until: string }[];
};
const list = (query: string, token = lister) => t.http("GET", `/billing/api/v1/subscriptions?${query}`, { token });
const balances = async (subject: string) =>
  (await t.http("GET", `/billing/api/v1/balances/${subject}`, { token: reader })).body.balances[0];

/** A fan with `credit` subscribed to a fresh streamer. */
async function subscribed(credit = 2000n, extra: Record<string, unknown> = {}) {
  const [fan, streamer] = [person("fan"), person("st")];
  await fund(t, fan, credit);
  const answer = await subscribe({
    subject: fan,
    streamer,
    plan_id: "pln_1",
    plan_version: 1,
    idempotency_key: `sub-${fan}`,
    ...extra,
  });
  expect(answer.status).toBe(201);
  return { fan, streamer, subscription: answer.body.subscription };
}

describe("subscribing from credit", () => {
  it("charges the tier's price from spendable credit to the streamer's payable and starts a period (201)", async () => {
    const { fan, streamer, subscription } = await subscribed(2000n, { tier: "tier_2", plan_version: 3 });
    expect(subscription).toMatchObject({
      subject: fan,
      streamer,
      plan_id: "pln_1",
      plan_version: "3",
      tier: "tier_2",
      price: { minor_units: "999", currency: "USD" },
      status: "SUBSCRIPTION_STATUS_ACTIVE",
      paid_via: "PAID_VIA_CREDIT",
      started_at: rfc3339(clock.now()),
      valid_until: rfc3339(new Date(clock.now().getTime() + PERIOD_MS)),
      periods: 1,
    });
    expect(subscription.id).toMatch(/^sub_/);
    expect(await balances(fan)).toMatchObject({ spendable_credit: "1001" });
    expect(await balances(streamer)).toMatchObject({ creator_payable: "999" });
    const history = await t.http("GET", `/billing/api/v1/balances/${fan}/transactions`, { token: reader });
    expect(history.body.transactions[0]).toMatchObject({
      kind: "TRANSACTION_KIND_SUBSCRIPTION",
      reference: { service: "billing", kind: "subscription", id: subscription.id },
    });
    expect(await eventsAbout(t, subscription.id)).toEqual(["billing.entitlement.changed"]);
  });

  it("prices the default tier when none is named, and applies a retried key once", async () => {
    const [fan, streamer] = [person("fan"), person("st")];
    await fund(t, fan, 1000n);
    const body = { subject: fan, streamer, plan_id: "pln_1", plan_version: 1, idempotency_key: `once-${fan}` };
    const first = await subscribe(body);
    expect(first.body.subscription).toMatchObject({ tier: "tier_1", price: { minor_units: "499", currency: "USD" } });
    const again = await subscribe(body);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(await balances(fan)).toMatchObject({ spendable_credit: "501" });
  });

  it("buys one more period on a current subscription, from its end, and resumes a canceled one", async () => {
    const { fan, streamer, subscription } = await subscribed(2000n);
    await cancel(subscription.id);
    const again = await subscribe({
      subject: fan,
      streamer,
      plan_id: "pln_1",
      plan_version: 2,
      idempotency_key: `more-${fan}`,
    });
    expect(again.status).toBe(201);
    expect(again.body.subscription).toMatchObject({
      id: subscription.id,
      status: "SUBSCRIPTION_STATUS_ACTIVE",
      plan_version: "2",
      periods: 2,
      valid_until: rfc3339(new Date(Date.parse(subscription.valid_until) + PERIOD_MS)),
    });
    expect(await balances(fan)).toMatchObject({ spendable_credit: String(2000 - 2 * 499) });
  });

  it("turns two first purchases for one channel at once into one subscription of two periods", async () => {
    const [fan, streamer] = [person("fan"), person("st")];
    await fund(t, fan, 2000n);
    const body = (key: string) => ({ subject: fan, streamer, plan_id: "pln_1", plan_version: 1, idempotency_key: key });
    const answers = await Promise.all([subscribe(body(`a-${fan}`)), subscribe(body(`b-${fan}`))]);
    expect(answers.map((a) => a.status)).toEqual([201, 201]);
    expect(answers[0].body.subscription.id).toBe(answers[1].body.subscription.id);
    const [current] = (await list(`subject=${fan}&view=SUBSCRIPTION_VIEW_SUBSCRIPTIONS`)).body.subscriptions
      .subscriptions;
    expect(current.periods).toBe(2);
    expect(await balances(fan)).toMatchObject({ spendable_credit: String(2000 - 2 * 499) });
  });

  it("refuses short credit (409 insufficient_funds) and writes nothing", async () => {
    const [fan, streamer] = [person("fan"), person("st")];
    await fund(t, fan, 100n);
    const answer = await subscribe({
      subject: fan,
      streamer,
      plan_id: "pln_1",
      plan_version: 1,
      idempotency_key: `k-${fan}`,
    });
    expect(answer.status).toBe(409);
    expect(answer.body).toMatchObject({ code: "insufficient_funds", balance: "credit" });
    expect(await entitlements(fan)).toEqual([]);
    expect(
      (await list(`subject=${fan}&view=SUBSCRIPTION_VIEW_SUBSCRIPTIONS&include_ended=true`)).body.subscriptions
        .subscriptions,
    ).toEqual([]);
    expect(await balances(fan)).toMatchObject({ spendable_credit: "100" });
  });

  it("refuses bad input naming the field (400) and an unknown tier (422 billing.unknown_tier)", async () => {
    const [fan, streamer] = [person("fan"), person("st")];
    const valid = { subject: fan, streamer, plan_id: "pln_1", plan_version: 1, idempotency_key: "k" };
    const cases: [Record<string, unknown>, string][] = [
      [{ ...valid, subject: "gst_a1" }, "subject"],
      [{ ...valid, streamer: "" }, "streamer"],
      [{ ...valid, streamer: fan }, "streamer"],
      [{ ...valid, plan_id: "" }, "plan_id"],
      [{ ...valid, plan_version: 0 }, "plan_version"],
      [{ ...valid, idempotency_key: "" }, "idempotency_key"],
    ];
    for (const [body, field] of cases) {
      const answer = await subscribe(body);
      expect({ status: answer.status, code: answer.body.code, field: answer.body.field }).toEqual({
        status: 400,
        code: "request.invalid",
        field,
      });
    }
    const tier = await subscribe({ ...valid, tier: "tier_9" });
    expect(tier.status).toBe(422);
    expect(tier.body.code).toBe("billing.unknown_tier");
  });

  it("is refused while the economy is frozen (409 economy.frozen)", async () => {
    const [fan, streamer] = [person("fan"), person("st")];
    await fund(t, fan, 1000n);
    await setFrozen(t, true);
    try {
      const answer = await subscribe({
        subject: fan,
        streamer,
        plan_id: "pln_1",
        plan_version: 1,
        idempotency_key: `k-${fan}`,
      });
      expect(answer.status).toBe(409);
      expect(answer.body.code).toBe("economy.frozen");
    } finally {
      await setFrozen(t, false);
    }
    expect(await entitlements(fan)).toEqual([]);
  });
});

describe("entitlements", () => {
  it("answers the current entitlements until valid_until, narrowed by streamer", async () => {
    const { fan, streamer, subscription } = await subscribed(2000n);
    const other = person("st");
    await subscribe({
      subject: fan,
      streamer: other,
      plan_id: "pln_2",
      plan_version: 1,
      idempotency_key: `two-${fan}`,
    });

    const answer = await t.http("GET", `/billing/api/v1/entitlements/${fan}`, { token: checker });
    expect(answer.body).toMatchObject({ subject: fan, checked_at: rfc3339(clock.now()) });
    expect(answer.body.entitlements.map((e: { streamer: string }) => e.streamer)).toEqual([other, streamer]);
    expect(await entitlements(fan, `?streamer=${streamer}`)).toEqual([
      {
        subject: fan,
        streamer,
        subscription_id: subscription.id,
        plan_id: "pln_1",
        plan_version: "1",
        valid_until: subscription.valid_until,
      },
    ]);

    // Paid time over: no entitlement, even before the sweep ends the subscription.
    clock.advance(PERIOD_MS);
    expect(await entitlements(fan)).toEqual([]);
  });

  it("refuses a subject or streamer that is not a usr_ subject (400)", async () => {
    for (const [path, field] of [
      ["/entitlements/gst_a1", "subject"],
      ["/entitlements/usr_a1?streamer=x", "streamer"],
    ]) {
      const answer = await t.http("GET", `/billing/api/v1${path}`, { token: checker });
      expect({ status: answer.status, field: answer.body.field }).toEqual({ status: 400, field });
    }
  });
});

describe("the subscriptions read", () => {
  it("needs both billing.entitlement.check and billing.subscription.manage", async () => {
    for (const token of [checker, manager]) {
      const answer = await list("", token);
      expect(answer.status).toBe(403);
      expect(answer.body.code).toBe("auth.capability_missing");
    }
  });

  it("answers entitlements by default and subscriptions by view, newest first, a page at a time", async () => {
    const streamer = person("st");
    const fans = [person("fan"), person("fan"), person("fan")];
    const ids: string[] = [];
    for (const fan of fans) {
      await fund(t, fan, 1000n);
      ids.push(
        (await subscribe({ subject: fan, streamer, plan_id: "pln_1", plan_version: 1, idempotency_key: `l-${fan}` }))
          .body.subscription.id,
      );
    }
    await cancel(ids[0], { immediately: true });

    const byDefault = await list(`streamer=${streamer}`);
    expect(byDefault.status).toBe(200);
    expect(byDefault.body.entitlements).toMatchObject({
      subject: "",
      checked_at: rfc3339(clock.now()),
      next_cursor: "",
    });
    expect(byDefault.body.entitlements.entitlements.map((e: { subject: string }) => e.subject)).toEqual([
      fans[2],
      fans[1],
    ]);

    const subscriptions = await list(`streamer=${streamer}&view=SUBSCRIPTION_VIEW_SUBSCRIPTIONS`);
    expect(subscriptions.body.subscriptions.subscriptions.map((s: { id: string }) => s.id)).toEqual([ids[2], ids[1]]);
    const withEnded = await list(`streamer=${streamer}&view=SUBSCRIPTION_VIEW_SUBSCRIPTIONS&include_ended=true`);
    expect(withEnded.body.subscriptions.subscriptions.map((s: { id: string }) => s.id)).toEqual([
      ids[2],
      ids[1],
      ids[0],
    ]);
    expect(withEnded.body.subscriptions.subscriptions[2].status).toBe("SUBSCRIPTION_STATUS_ENDED");

    const first = await list(`streamer=${streamer}&view=SUBSCRIPTION_VIEW_SUBSCRIPTIONS&include_ended=true&limit=2`);
    expect(first.body.subscriptions.subscriptions).toHaveLength(2);
    const second = await list(
      `streamer=${streamer}&view=SUBSCRIPTION_VIEW_SUBSCRIPTIONS&include_ended=true&limit=2&cursor=${first.body.subscriptions.next_cursor}`,
    );
    expect(second.body.subscriptions.subscriptions.map((s: { id: string }) => s.id)).toEqual([ids[0]]);
    expect(second.body.subscriptions.next_cursor).toBe("");

    const oneFan = await list(`subject=${fans[1]}`);
    expect(oneFan.body.entitlements).toMatchObject({
      subject: fans[1],
      entitlements: [expect.objectContaining({ subscription_id: ids[1] })],
    });
  });

  it("refuses bad filters naming the field (400)", async () => {
    for (const [query, field] of [
      ["subject=someone", "subject"],
      ["streamer=gst_a1", "streamer"],
      ["include_ended=true", "include_ended"],
      ["limit=201", "limit"],
      ["cursor=%25", "cursor"],
    ]) {
      const answer = await list(query);
      expect({ status: answer.status, field: answer.body.field }).toEqual({ status: 400, field });
    }
  });
});

describe("cancelling", () => {
  it("stops renewal but keeps the entitlement until valid_until; a second cancel changes nothing", async () => {
    const { fan, streamer, subscription } = await subscribed();
    const answer = await cancel(subscription.id);
    expect(answer.status).toBe(200);
    expect(answer.body.subscription).toMatchObject({
      status: "SUBSCRIPTION_STATUS_CANCELED",
      valid_until: subscription.valid_until,
    });
    expect(await entitlements(fan, `?streamer=${streamer}`)).toHaveLength(1);
    expect((await cancel(subscription.id)).body).toEqual(answer.body);
    expect(await eventsAbout(t, subscription.id)).toEqual([
      "billing.entitlement.changed",
      "billing.entitlement.changed",
    ]);
  });

  it("immediately ends it now without refund; an ended one is 409 subscription.ended", async () => {
    const { fan, subscription } = await subscribed(1000n);
    const answer = await cancel(subscription.id, { immediately: true });
    expect(answer.status).toBe(200);
    expect(answer.body.subscription).toMatchObject({
      status: "SUBSCRIPTION_STATUS_ENDED",
      ended_at: rfc3339(clock.now()),
      valid_until: rfc3339(clock.now()),
    });
    expect(await entitlements(fan)).toEqual([]);
    expect(await balances(fan)).toMatchObject({ spendable_credit: "501" });
    const again = await cancel(subscription.id);
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("subscription.ended");
  });

  it("answers 404 subscription.not_found for an unknown id, and is refused while frozen", async () => {
    const missing = await cancel("sub_nothing");
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe("subscription.not_found");
    const { subscription } = await subscribed();
    await setFrozen(t, true);
    try {
      const answer = await cancel(subscription.id);
      expect(answer.status).toBe(409);
      expect(answer.body.code).toBe("economy.frozen");
    } finally {
      await setFrozen(t, false);
    }
  });
});
