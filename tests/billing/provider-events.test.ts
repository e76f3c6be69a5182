import { beforeAll, describe, expect, it } from "vitest";
import { usePlatform } from "../support/platform.js";
import { deliver, orderOf, packPurchase, testProvider } from "./payments.js";
import { billingOf, person } from "./support.js";

const t = usePlatform({ services: ["billing"] });
let tips: string;
let admin: string;

beforeAll(async () => {
  tips = await t.token({ kind: "service", svc: "tips", caps: ["billing.intent.create"] });
  admin = await t.token({ kind: "service", svc: "ops", caps: ["billing.ledger.admin"] });
});

/** The page of the list: AdminResult's provider_events (a ProviderEventList). */
const list = async (query = "") => {
  const answer = await t.http("GET", `/billing/api/v1/admin/provider-events${query}`, { token: admin });
  return { ...answer, body: answer.body.provider_events ?? answer.body };
};
const reprocess = (id: string) =>
  t.http("POST", `/billing/api/v1/admin/provider-events/${id}/reprocess`, { token: admin, body: {} });
const newIntent = async () => {
  const answer = await t.http("POST", "/billing/api/v1/intents", { token: tips, body: packPurchase(person()) });
  return { id: answer.body.intent.id as string, order: orderOf(answer) };
};
const statusOf = async (id: string) =>
  (await t.http("GET", `/billing/api/v1/intents/${id}`, { token: tips })).body.intent.status;
const execute = (sql: string, params: unknown[]) => billingOf(t).orm.em.getConnection().execute(sql, params);

describe("listing provider events", () => {
  it("lists them newest first, filtered by state, a page at a time", async () => {
    const provider = testProvider(t);
    const a = await newIntent();
    const b = await newIntent();
    const approvedA = (await deliver(t, await provider.approve(a.order))).body.event_id;
    const approvedB = (await deliver(t, await provider.approve(b.order))).body.event_id;
    const { orderId } = await provider.createOrder({ currency: "USD", price: 100n, requestId: "stray" });
    const stray = (await deliver(t, await provider.approve(orderId))).body.event_id;

    const all = await list();
    expect(all.status).toBe(200);
    expect(all.body.provider_events.map((e: { id: string }) => e.id).slice(0, 3)).toEqual([
      stray,
      approvedB,
      approvedA,
    ]);
    expect(all.body.provider_events[0]).toMatchObject({
      provider: "test",
      type: "order.approved",
      provider_order_id: orderId,
      status: "PROVIDER_EVENT_STATUS_IGNORED",
      deliveries: 1,
    });
    expect(all.body.provider_events[0].detail).toContain(orderId);

    const ignored = await list("?status=ignored");
    expect(
      ignored.body.provider_events.every((e: { status: string }) => e.status === "PROVIDER_EVENT_STATUS_IGNORED"),
    ).toBe(true);
    const applied = await list("?status=applied&limit=1");
    expect(applied.body.provider_events.map((e: { id: string }) => e.id)).toEqual([approvedB]);
    const next = await list(`?status=applied&limit=1&cursor=${applied.body.next_cursor}`);
    expect(next.body.provider_events.map((e: { id: string }) => e.id)).toEqual([approvedA]);
    expect(next.body.provider_events[0].applied_at).toBeTruthy();
  });

  it("refuses an unknown state, a bad limit and a cursor it did not issue (400 naming the field)", async () => {
    expect((await list("?status=done")).body).toMatchObject({ status: 400, field: "status" });
    expect((await list("?limit=500")).body).toMatchObject({ status: 400, field: "limit" });
    expect((await list("?cursor=nope")).body).toMatchObject({ status: 400, field: "cursor" });
  });
});

describe("reprocessing a provider event", () => {
  it("answers 404 provider_event.not_found for an event that does not exist", async () => {
    expect((await reprocess("pev_none")).body).toMatchObject({ status: 404, code: "provider_event.not_found" });
  });

  it("applies a failed event again", async () => {
    const { id, order } = await newIntent();
    const delivery = await testProvider(t).approve(order);
    // As left by an application that failed (a lost connection, a bug since fixed).
    await execute(
      `insert into billing.provider_events (id, provider, provider_event_id, type, provider_order_id, payload, status, detail, received_at)
       values ('pev_failed1', 'test', ?, 'order.approved', ?, ?, 'failed', 'connection lost', now())`,
      [delivery.id, order, delivery.body],
    );
    const answer = await reprocess("pev_failed1");
    expect(answer.status).toBe(200);
    expect(answer.body.provider_event).toMatchObject({
      id: "pev_failed1",
      status: "PROVIDER_EVENT_STATUS_APPLIED",
      detail: "",
    });
    expect(await statusOf(id)).toBe("INTENT_STATUS_APPROVED");
  });

  it("does not redo what an applied event did: the intent settles once", async () => {
    const { id, order } = await newIntent();
    const provider = testProvider(t);
    await provider.approve(order);
    await provider.captureOrder(order);
    const captured = await deliver(
      t,
      (await provider.deliveries(order)).find((d) => d.type === "payment.captured")!,
    );
    const before = (await t.http("GET", `/billing/api/v1/intents/${id}`, { token: tips })).body.intent;
    const answer = await reprocess(captured.body.event_id);
    expect(answer.body.provider_event).toMatchObject({ status: "PROVIDER_EVENT_STATUS_APPLIED" });
    expect((await t.http("GET", `/billing/api/v1/intents/${id}`, { token: tips })).body.intent).toEqual(before);
    const [row] = await execute(
      `select count(*)::int as n from billing.transactions where reference_kind = 'intent' and reference_id = ?`,
      [id],
    );
    expect(row.n).toBe(1);
  });

  it("marks an event whose application fails failed, with the reason", async () => {
    await execute(
      `insert into billing.provider_events (id, provider, provider_event_id, type, provider_order_id, payload, status, received_at)
       values ('pev_gone1', 'gone', 'e1', 'order.approved', 'o1', '{}', 'failed', now())`,
      [],
    );
    const answer = await reprocess("pev_gone1");
    expect(answer.body.provider_event).toMatchObject({ status: "PROVIDER_EVENT_STATUS_FAILED" });
    expect(answer.body.provider_event.detail).toContain("gone");
  });
});

describe("the provider-events worker", () => {
  it("applies what an apply after the commit left pending", async () => {
    const { id, order } = await newIntent();
    const delivery = await testProvider(t).approve(order);
    // Stored, and the process stopped before applying it.
    await execute(
      `insert into billing.provider_events (id, provider, provider_event_id, type, provider_order_id, payload, status, received_at)
       values ('pev_pending1', 'test', ?, 'order.approved', ?, ?, 'pending', now())`,
      [delivery.id, order, delivery.body],
    );
    await expect.poll(() => statusOf(id), { timeout: 12_000, interval: 250 }).toBe("INTENT_STATUS_APPROVED");
  }, 15_000);
});
