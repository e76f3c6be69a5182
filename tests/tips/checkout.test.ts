import { beforeAll, describe, expect, it, vi } from "vitest";
import { create } from "@bufbuild/protobuf";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import { IntentSchema, IntentStatus } from "../../gen/pf/billing/v1/intents_pb.js";
import { IntentChangedSchema } from "../../gen/pf/billing/v1/events_pb.js";
import { consumers } from "../../services/tips/consumers/intents.js";
import type { TipsContext } from "../../services/tips/context.js";
import { declineCheckout, lockCheckout } from "../../services/tips/db/checkouts.js";
import { untilPassesAfter } from "../support/lease-tries.js";
import { usePlatform } from "../support/platform.js";
import {
  as,
  balanceReader,
  billingTransactionsFor,
  deliver,
  fund,
  newKey,
  payAtProvider,
  person,
  setProfile,
  testProvider,
  TIPS_ENV,
  tipsRows,
  usd,
  userToken,
} from "./support.js";

const t = usePlatform({ services: ["tips", "billing"], env: TIPS_ENV });
let balances: Awaited<ReturnType<typeof balanceReader>>;

beforeAll(async () => {
  balances = await balanceReader(t);
});

/** A creator accepting tips with an open public goal of 1000 USD minor units, and a funded supporter. */
async function scene(credit = 1000n) {
  const [creator, supporter] = [person("cre"), person("sup")];
  await setProfile(t, creator);
  if (credit > 0n) await fund(t, supporter, credit);
  const creatorCall = as(t, await userToken(t, creator));
  const goal = (await creatorCall("POST", "/goals", { title: "New mic", target: usd(1000) })).body.goal;
  return { creator, supporter, goal, creatorCall, supporterCall: as(t, await userToken(t, supporter)) };
}

const totalOf = async (call: ReturnType<typeof as>, goalId: string) =>
  (await call("GET", `/goals/${goalId}`)).body.goal.total.minor_units;

describe("a tip paid from billing credit", () => {
  it("moves the ledger balances, settles in the answer and counts toward its goal", async () => {
    const { creator, supporter, goal, creatorCall, supporterCall } = await scene();
    expect(await totalOf(creatorCall, goal.id)).toBe("0");
    const answer = await supporterCall(
      "POST",
      "/checkout",
      { creator, amount: usd(300), message: "gg", goal_id: goal.id },
      { "idempotency-key": newKey() },
    );
    expect(answer.status).toBe(201);
    expect(answer.body.checkout).toMatchObject({
      kind: "INTERACTION_KIND_TIP",
      supporter,
      creator,
      payment_method: "PAYMENT_METHOD_CREDIT",
      payment_state: "PAYMENT_STATE_SETTLED",
    });
    expect(answer.body.checkout.transaction_id).toMatch(/^ltx_/);
    expect(answer.body.interaction).toMatchObject({
      id: answer.body.checkout.id,
      payment_state: "PAYMENT_STATE_SETTLED",
      delivery_state: "DELIVERY_STATE_DELIVERED",
      goal_id: goal.id,
      amount: { minor_units: "300", currency: "USD" },
    });
    expect(await balances(supporter)).toEqual([expect.objectContaining({ currency: "USD", spendable_credit: "700" })]);
    expect(await balances(creator)).toEqual([expect.objectContaining({ currency: "USD", creator_payable: "300" })]);
    expect(await totalOf(creatorCall, goal.id)).toBe("300");
  });

  it("is refused to a guest, and to a service acting for nobody (403 auth.member_required)", async () => {
    const { creator } = await scene();
    const guest = as(t, await t.token({ kind: "user", sub: "gst_g1" }));
    const body = { creator, amount: usd(100) };
    for (const path of ["/checkout", "/paid-messages", "/media-requests"]) {
      const answer = await guest("POST", path, { ...body, message: "hi" }, { "idempotency-key": newKey() });
      expect(answer.body, path).toMatchObject({ status: 403, code: "auth.member_required" });
    }
    const web = await t.token({ kind: "service", svc: "web", caps: ["tips.checkout.create"] });
    const headers = { "idempotency-key": newKey() };
    const nobody = await t.http("POST", "/tips/api/v1/checkout", { token: web, body, headers });
    expect(nobody.body).toMatchObject({ status: 403, code: "auth.member_required" });
  });

  it("is started by a first-party service for the person it names (X-PF-Subject)", async () => {
    const { creator, supporter } = await scene();
    const web = await t.token({ kind: "service", svc: "web", caps: ["tips.checkout.create"] });
    const answer = await t.http("POST", "/tips/api/v1/checkout", {
      token: web,
      body: { creator, amount: usd(150) },
      headers: { "x-pf-subject": supporter, "idempotency-key": newKey() },
    });
    expect(answer.status).toBe(201);
    expect(answer.body.checkout.supporter).toBe(supporter);
    expect(await balances(creator)).toEqual([expect.objectContaining({ creator_payable: "150" })]);
  });

  it("with too little credit is declined by billing and answers 409 tips.payment_declined, also on retry; nothing moves", async () => {
    const { creator, supporter, supporterCall } = await scene(100n);
    const key = newKey();
    const first = await supporterCall("POST", "/checkout", { creator, amount: usd(300) }, { "idempotency-key": key });
    expect(first.body).toMatchObject({ status: 409, code: "tips.payment_declined", reason: "insufficient_funds" });
    const again = await supporterCall("POST", "/checkout", { creator, amount: usd(300) }, { "idempotency-key": key });
    expect(again.body).toMatchObject({
      status: 409,
      code: "tips.payment_declined",
      checkout_id: first.body.checkout_id,
    });
    expect(await balances(supporter)).toEqual([expect.objectContaining({ spendable_credit: "100" })]);
    expect(await balances(creator)).toEqual([]);
    const read = await supporterCall("GET", `/interactions/${first.body.checkout_id}`);
    expect(read.body.interaction).toMatchObject({
      payment_state: "PAYMENT_STATE_DECLINED",
      delivery_state: "DELIVERY_STATE_CANCELED",
    });
  });
});

describe("the Idempotency-Key", () => {
  it("is required (400 naming it)", async () => {
    const { creator, supporterCall } = await scene();
    const answer = await supporterCall("POST", "/checkout", { creator, amount: usd(100) });
    expect(answer.body).toMatchObject({ status: 400, code: "request.invalid", field: "Idempotency-Key" });
  });

  it("sent twice yields one tip: the retry answers the first checkout, money moves once", async () => {
    const { creator, supporter, supporterCall } = await scene();
    const key = newKey();
    const first = await supporterCall("POST", "/checkout", { creator, amount: usd(200) }, { "idempotency-key": key });
    const again = await supporterCall("POST", "/checkout", { creator, amount: usd(200) }, { "idempotency-key": key });
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(await balances(supporter)).toEqual([expect.objectContaining({ spendable_credit: "800" })]);
    expect(await billingTransactionsFor(t, first.body.checkout.id)).toBe(1);
  });

  it("sent concurrently yields one tip", async () => {
    const { creator, supporter, supporterCall } = await scene();
    const key = newKey();
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        supporterCall("POST", "/checkout", { creator, amount: usd(100) }, { "idempotency-key": key }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(6).fill(201));
    expect(new Set(answers.map((a) => a.body.checkout.id)).size).toBe(1);
    expect(await balances(supporter)).toEqual([expect.objectContaining({ spendable_credit: "900" })]);
    expect(await balances(creator)).toEqual([expect.objectContaining({ creator_payable: "100" })]);
    const list = await as(t, await userToken(t, creator))("GET", "/interactions?role=INTERACTION_ROLE_CREATOR");
    expect(list.body.interactions).toHaveLength(1);
  });

  it("with another request is refused (409 idempotency.mismatch)", async () => {
    const { creator, supporterCall } = await scene();
    const key = newKey();
    await supporterCall("POST", "/checkout", { creator, amount: usd(200) }, { "idempotency-key": key });
    const other = await supporterCall("POST", "/checkout", { creator, amount: usd(201) }, { "idempotency-key": key });
    expect(other.body).toMatchObject({ status: 409, code: "idempotency.mismatch" });
    // The same body on another route is another request: the key guards the kind too.
    const body = { creator, amount: usd(200), message: "same body" };
    const shared = newKey();
    expect((await supporterCall("POST", "/checkout", body, { "idempotency-key": shared })).status).toBe(201);
    const otherRoute = await supporterCall("POST", "/paid-messages", body, { "idempotency-key": shared });
    expect(otherRoute.body).toMatchObject({ status: 409, code: "idempotency.mismatch" });
  });
});

describe("a tip paid through a billing checkout intent", () => {
  it("is pending (not counted) until the provider's webhook settles it, then counts and pays the creator", async () => {
    const { creator, supporter, goal, creatorCall, supporterCall } = await scene(0n);
    const answer = await supporterCall(
      "POST",
      "/checkout",
      {
        creator,
        amount: usd(400),
        goal_id: goal.id,
        payment_method: "PAYMENT_METHOD_INTENT",
        return_url: "https://app.example/back",
      },
      { "idempotency-key": newKey() },
    );
    expect(answer.status).toBe(201);
    expect(answer.body.checkout).toMatchObject({
      payment_method: "PAYMENT_METHOD_INTENT",
      payment_state: "PAYMENT_STATE_PENDING",
    });
    expect(answer.body.checkout.intent_id).toMatch(/^pi_/);
    expect(answer.body.interaction).toMatchObject({
      payment_state: "PAYMENT_STATE_PENDING",
      delivery_state: "DELIVERY_STATE_PENDING",
    });
    expect(await totalOf(creatorCall, goal.id)).toBe("0");

    await payAtProvider(t, answer.body.checkout.checkout_url);
    await vi.waitFor(
      async () =>
        expect(
          (await supporterCall("GET", `/interactions/${answer.body.checkout.id}`)).body.interaction.payment_state,
        ).toBe("PAYMENT_STATE_SETTLED"),
      { timeout: 10_000, interval: 100 },
    );
    expect(await totalOf(creatorCall, goal.id)).toBe("400");
    expect(await balances(creator)).toEqual([expect.objectContaining({ creator_payable: "400" })]);
    expect(await balances(supporter)).toEqual([]);
  });

  it("declined by the provider never counts and delivers nothing", async () => {
    const { creator, goal, creatorCall, supporterCall } = await scene(0n);
    const answer = await supporterCall(
      "POST",
      "/checkout",
      { creator, amount: usd(400), goal_id: goal.id, payment_method: "PAYMENT_METHOD_INTENT" },
      { "idempotency-key": newKey() },
    );
    const order = new URL(answer.body.checkout.checkout_url).searchParams.get("order")!;
    await deliver(t, await testProvider(t).decline(order, "card_declined"));
    await vi.waitFor(
      async () =>
        expect((await supporterCall("GET", `/interactions/${answer.body.checkout.id}`)).body.interaction).toMatchObject(
          {
            payment_state: "PAYMENT_STATE_DECLINED",
            delivery_state: "DELIVERY_STATE_CANCELED",
          },
        ),
      { timeout: 10_000, interval: 100 },
    );
    expect(await totalOf(creatorCall, goal.id)).toBe("0");
    expect(await balances(creator)).toEqual([]);
  });
});

describe("billing's intent events", () => {
  it("settle the checkout they reference (the durable consumer's handler), once; other services' intents pass", async () => {
    const { creator, supporterCall } = await scene(0n);
    const answer = await supporterCall(
      "POST",
      "/paid-messages",
      { creator, amount: usd(500), message: "via event", payment_method: "PAYMENT_METHOD_INTENT" },
      { "idempotency-key": newKey() },
    );
    const { id, intent_id: intentId } = answer.body.checkout;
    const settled = create(IntentChangedSchema, {
      intent: create(IntentSchema, {
        id: intentId,
        status: IntentStatus.SETTLED,
        reference: { service: "tips", kind: "interaction", id },
      }),
      occurredAt: timestampNow(),
    });
    const handler = consumers.find((c) => c.subject === "billing.intent.settled")!;
    const tips = t.platform.contexts.get("tips") as TipsContext;
    const foreign = create(IntentChangedSchema, {
      intent: create(IntentSchema, {
        id: "pi_other",
        status: IntentStatus.SETTLED,
        reference: { service: "vip", kind: "plan", id },
      }),
    });
    await tips.transaction((em) => handler.handle(foreign, em, { id: "e0", subject: handler.subject }, tips));
    expect(await tipsRows(t, "interactions", id)).toBe(0);
    await tips.transaction((em) => handler.handle(settled, em, { id: "e1", subject: handler.subject }, tips));
    await tips.transaction((em) => handler.handle(settled, em, { id: "e2", subject: handler.subject }, tips));
    expect(await tipsRows(t, "interactions", id)).toBe(1);
    expect((await supporterCall("GET", `/interactions/${id}`)).body.interaction).toMatchObject({
      payment_state: "PAYMENT_STATE_SETTLED",
      intent_id: intentId,
    });
  });

  it("billing's word wins: a checkout tips took for declined is settled when billing says the money moved", async () => {
    const { creator, goal, creatorCall, supporterCall } = await scene(0n);
    const answer = await supporterCall(
      "POST",
      "/checkout",
      { creator, amount: usd(300), goal_id: goal.id, payment_method: "PAYMENT_METHOD_INTENT" },
      { "idempotency-key": newKey() },
    );
    const { id, intent_id: intentId } = answer.body.checkout;
    const tips = t.platform.contexts.get("tips") as TipsContext;
    await tips.transaction(async (em) =>
      declineCheckout(em, (await lockCheckout(em, id))!, "billing.unavailable", new Date()),
    );
    expect((await supporterCall("GET", `/interactions/${id}`)).body.interaction.payment_state).toBe(
      "PAYMENT_STATE_DECLINED",
    );
    const handler = consumers.find((c) => c.subject === "billing.intent.settled")!;
    const settled = create(IntentChangedSchema, {
      intent: create(IntentSchema, {
        id: intentId,
        status: IntentStatus.SETTLED,
        reference: { service: "tips", kind: "interaction", id },
      }),
    });
    await tips.transaction((em) => handler.handle(settled, em, { id: "e3", subject: handler.subject }, tips));
    expect((await supporterCall("GET", `/interactions/${id}`)).body.interaction).toMatchObject({
      payment_state: "PAYMENT_STATE_SETTLED",
      delivery_state: "DELIVERY_STATE_DELIVERED",
    });
    expect(await totalOf(creatorCall, goal.id)).toBe("300");
  });
});

describe("a paid message", () => {
  it("has no row before billing settles it; settled, it exists and shows", async () => {
    const { creator, supporterCall, creatorCall } = await scene(0n);
    const answer = await supporterCall(
      "POST",
      "/paid-messages",
      { creator, amount: usd(500), message: "hello stream", payment_method: "PAYMENT_METHOD_INTENT" },
      { "idempotency-key": newKey() },
    );
    expect(answer.status).toBe(201);
    expect(answer.body.checkout).toMatchObject({
      kind: "INTERACTION_KIND_PAID_MESSAGE",
      payment_state: "PAYMENT_STATE_PENDING",
    });
    expect(answer.body.interaction).toBeUndefined();
    const id = answer.body.checkout.id;
    expect(await tipsRows(t, "interactions", id)).toBe(0);
    expect((await creatorCall("GET", `/interactions/${id}`)).body).toMatchObject({
      status: 404,
      code: "interaction.not_found",
    });

    await payAtProvider(t, answer.body.checkout.checkout_url);
    await vi.waitFor(async () => expect(await tipsRows(t, "interactions", id)).toBe(1), {
      timeout: 10_000,
      interval: 100,
    });
    expect((await creatorCall("GET", `/interactions/${id}`)).body.interaction).toMatchObject({
      kind: "INTERACTION_KIND_PAID_MESSAGE",
      message: "hello stream",
      payment_state: "PAYMENT_STATE_SETTLED",
      delivery_state: "DELIVERY_STATE_DELIVERED",
      hidden: false,
    });
  });

  it("needs its message (400 naming it)", async () => {
    const { creator, supporterCall } = await scene();
    const answer = await supporterCall(
      "POST",
      "/paid-messages",
      { creator, amount: usd(500) },
      { "idempotency-key": newKey() },
    );
    expect(answer.body).toMatchObject({ status: 400, field: "message" });
  });
});

describe("the creator's profile decides", () => {
  it("refuses a creator without a profile or not accepting (409 tips.not_accepting)", async () => {
    const { creator, supporterCall } = await scene();
    const stranger = person("cre");
    expect(
      (
        await supporterCall(
          "POST",
          "/checkout",
          { creator: stranger, amount: usd(100) },
          { "idempotency-key": newKey() },
        )
      ).body,
    ).toMatchObject({ status: 409, code: "tips.not_accepting" });
    await setProfile(t, creator, { accepting: false });
    expect(
      (await supporterCall("POST", "/checkout", { creator, amount: usd(100) }, { "idempotency-key": newKey() })).body,
    ).toMatchObject({ status: 409, code: "tips.not_accepting" });
  });

  it("refuses an amount under the creator's minimum per kind (422 tips.below_minimum) or in another currency (422)", async () => {
    const { creator, supporter, supporterCall } = await scene();
    await setProfile(t, creator, { minimums: { tip: usd(200), paid_message: usd(500) } });
    const tip = await supporterCall(
      "POST",
      "/checkout",
      { creator, amount: usd(199) },
      { "idempotency-key": newKey() },
    );
    expect(tip.body).toMatchObject({
      status: 422,
      code: "tips.below_minimum",
      minimum: { minor_units: "200", currency: "USD" },
    });
    const message = await supporterCall(
      "POST",
      "/paid-messages",
      { creator, amount: usd(300), message: "hi" },
      { "idempotency-key": newKey() },
    );
    expect(message.body).toMatchObject({ status: 422, code: "tips.below_minimum" });
    const euro = await supporterCall(
      "POST",
      "/checkout",
      { creator, amount: { minor_units: 500, currency: "EUR" } },
      { "idempotency-key": newKey() },
    );
    expect(euro.body).toMatchObject({ status: 422, code: "tips.currency_not_accepted" });
    expect(
      (await supporterCall("POST", "/checkout", { creator, amount: usd(200) }, { "idempotency-key": newKey() })).status,
    ).toBe(201);
    expect(await balances(supporter)).toEqual([expect.objectContaining({ spendable_credit: "800" })]);
  });

  it("refuses a supporter tipping themselves, a bad amount, a private or closed goal", async () => {
    const { creator, supporter, supporterCall, creatorCall } = await scene();
    expect(
      (
        await supporterCall(
          "POST",
          "/checkout",
          { creator: supporter, amount: usd(100) },
          { "idempotency-key": newKey() },
        )
      ).body,
    ).toMatchObject({ status: 400, field: "creator" });
    expect(
      (await supporterCall("POST", "/checkout", { creator, amount: usd(0) }, { "idempotency-key": newKey() })).body,
    ).toMatchObject({ status: 400, field: "amount.minor_units" });
    const hidden = (await creatorCall("POST", "/goals", { title: "secret", target: usd(100), public: false })).body
      .goal;
    expect(
      (
        await supporterCall(
          "POST",
          "/checkout",
          { creator, amount: usd(100), goal_id: hidden.id },
          { "idempotency-key": newKey() },
        )
      ).body,
    ).toMatchObject({ status: 404, code: "goal.not_found" });
    const closed = (await creatorCall("POST", "/goals", { title: "done", target: usd(100) })).body.goal;
    await creatorCall("POST", `/goals/${closed.id}/close`, {});
    expect(
      (
        await supporterCall(
          "POST",
          "/checkout",
          { creator, amount: usd(100), goal_id: closed.id },
          { "idempotency-key": newKey() },
        )
      ).body,
    ).toMatchObject({ status: 409, code: "goal.closed" });
    expect(
      (
        await supporterCall(
          "POST",
          "/checkout",
          { creator, amount: usd(100), price: usd(1) },
          { "idempotency-key": newKey() },
        )
      ).body,
    ).toMatchObject({ status: 400, code: "request.invalid" });
  });
});

describe("a pending credit checkout left by a crash", () => {
  it("is completed by the recovery worker, paying once", async () => {
    const { creator, supporter } = await scene();
    const id = `int_crash${Date.now().toString(36)}`;
    const em = t.platform.contexts.get("tips")!.orm.em.fork();
    // As if the instance died between recording the checkout and calling billing.
    await em.getConnection().execute(
      `insert into tips.checkouts
         (id, supporter, creator, kind, currency, amount, method, payment_state, created_at, updated_at)
       values (?, ?, ?, 'tip', 'USD', 250, 'credit', 'pending', now() - interval '1 minute', now() - interval '1 minute')`,
      [id, supporter, creator],
    );
    await em.getConnection().execute(
      `insert into tips.interactions (id, creator, supporter, kind, currency, amount, method, payment_state, delivery_state, moderation, created_at, updated_at)
       values (?, ?, ?, 'tip', 'USD', 250, 'credit', 'pending', 'pending', 'visible', now(), now())`,
      [id, creator, supporter],
    );
    const supporterCall = as(t, await userToken(t, supporter));
    await vi.waitFor(
      async () =>
        expect((await supporterCall("GET", `/interactions/${id}`)).body.interaction.payment_state).toBe(
          "PAYMENT_STATE_SETTLED",
        ),
      { timeout: 10_000, interval: 100 },
    );
    expect(await balances(creator)).toEqual([expect.objectContaining({ creator_payable: "250" })]);
    expect(await billingTransactionsFor(t, id)).toBe(1);
  });
});

describe("the recovery worker", () => {
  it("backs off: a checkout is looked at again only once as long has passed since its last look as it had been pending then", async () => {
    const { creator, supporter } = await scene(0n);
    const em = t.platform.contexts.get("tips")!.orm.em.fork();
    const insert = (id: string, createdAgo: string, lookedAgo: string) =>
      em.getConnection().execute(
        `insert into tips.checkouts
           (id, supporter, creator, kind, currency, amount, method, payment_state, intent_id, created_at, updated_at)
         values (?, ?, ?, 'tip', 'USD', 250, 'intent', 'pending', ?, now() - ?::interval, now() - ?::interval)`,
        [id, supporter, creator, `pi_never${id}`, createdAgo, lookedAgo],
      );
    const stamp = Date.now().toString(36);
    // An intent nobody pays: pending 10 minutes, looked at a minute ago, next look in 9 minutes.
    await insert(`int_old${stamp}`, "10 minutes", "1 minute");
    // Pending 2 minutes, looked at a minute ago: due now.
    await insert(`int_due${stamp}`, "2 minutes", "1 minute");
    const lookedAt = async (id: string) => {
      const [row] = await em
        .getConnection()
        .execute<{ updated_at: string | Date }[]>(`select updated_at from tips.checkouts where id = ?`, [id]);
      return new Date(row.updated_at).getTime();
    };
    const before = await lookedAt(`int_old${stamp}`);
    await vi.waitFor(async () => expect(await lookedAt(`int_due${stamp}`)).toBeGreaterThan(Date.now() - 30_000), {
      timeout: 10_000,
      interval: 100,
    });
    // A whole pass of the worker after that one left the old checkout alone too.
    await untilPassesAfter(t.platform.contexts.get("tips")!, "tips.recovery");
    expect(await lookedAt(`int_old${stamp}`)).toBe(before);
  });
});
