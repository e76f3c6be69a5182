import { beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { usePlatform } from "../support/platform.js";
import { eventsAbout, setFrozen } from "./checks.js";
import { ALL_BUT_MANAGE, fund, person } from "./support.js";

const clock = new ManualClock(new Date("2026-03-01T00:00:00Z"));
const t = usePlatform({ services: ["billing"], clock });
const ESCROW_MS = 168 * 3_600_000;

let requester: string;
let manager: string;
let reader: string;

beforeAll(async () => {
  requester = await t.token({ kind: "service", svc: "network", caps: ["billing.cashout.request"] });
  manager = await t.token({ kind: "service", svc: "payouts", caps: ["billing.cashout.manage"] });
  reader = await t.token({ kind: "service", svc: "tips", caps: ["billing.balance.read"] });
});

const usd = (minor: number) => ({ minor_units: minor, currency: "USD" });
const request = (body: Record<string, unknown>, token = requester) =>
  t.http("POST", "/billing/api/v1/cashouts", { token, body });
const approve = (id: string, body: Record<string, unknown>, token = manager) =>
  t.http("POST", `/billing/api/v1/cashouts/${id}/approve`, { token, body });
const deny = (id: string, body: Record<string, unknown>, token = manager) =>
  t.http("POST", `/billing/api/v1/cashouts/${id}/deny`, { token, body });
const balances = async (subject: string) =>
  (await t.http("GET", `/billing/api/v1/balances/${subject}`, { token: reader })).body.balances[0];
const history = async (subject: string) => {
  const answer = await t.http("GET", `/billing/api/v1/balances/${subject}/transactions`, { token: reader });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body.transactions;
};
/** Times as proto JSON writes them (RFC 3339, fractions only when present). */
const rfc3339 = (at: Date) => at.toISOString().replace(".000Z", "Z");

/** A creator with `payable` earned and a cashout of `amount` requested. */
async function requested(amount = 2000, payable = 5000n) {
  const creator = person("cr");
  await fund(t, creator, payable, { kind: "payable" });
  const answer = await request({ subject: creator, amount: usd(amount), idempotency_key: `co-${creator}` });
  expect(answer.status).toBe(201);
  return { creator, cashout: answer.body.cashout };
}

describe("requesting a cashout", () => {
  it("moves creator payable into escrow (201), referenced for reconciliation, and publishes billing.cashout.requested", async () => {
    const { creator, cashout } = await requested(2000);
    expect(cashout).toMatchObject({
      subject: creator,
      amount: { minor_units: "2000", currency: "USD" },
      status: "CASHOUT_STATUS_REQUESTED",
      escrow_until: rfc3339(new Date(clock.now().getTime() + ESCROW_MS)),
      created_at: rfc3339(clock.now()),
    });
    expect(cashout.id).toMatch(/^co_/);
    expect(await balances(creator)).toMatchObject({
      creator_payable: "3000",
      pending_payouts: "2000",
      spendable_credit: "0",
    });
    const [latest] = await history(creator);
    expect(latest).toMatchObject({
      kind: "TRANSACTION_KIND_CASHOUT_REQUEST",
      reference: { service: "billing", kind: "cashout", id: cashout.id },
    });
    expect(await eventsAbout(t, cashout.id)).toEqual(["billing.cashout.requested"]);
  });

  it("applies a retried key once", async () => {
    const creator = person("cr");
    await fund(t, creator, 5000n, { kind: "payable" });
    const body = { subject: creator, amount: usd(1500), idempotency_key: `once-${creator}` };
    const first = await request(body);
    const again = await request(body);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(await balances(creator)).toMatchObject({ creator_payable: "3500", pending_payouts: "1500" });
  });

  it("never withdraws bought credit: lots of credit and no payable is 409 insufficient_funds", async () => {
    const buyer = person("buyer");
    await fund(t, buyer, 100_000n);
    const answer = await request({ subject: buyer, amount: usd(1000), idempotency_key: `k-${buyer}` });
    expect(answer.status).toBe(409);
    expect(answer.body).toMatchObject({ code: "insufficient_funds", balance: "payable", available: "0" });
    expect(await balances(buyer)).toMatchObject({
      spendable_credit: "100000",
      creator_payable: "0",
      pending_payouts: "0",
    });
  });

  it("takes at least the minimum (422 cashout.below_minimum naming it)", async () => {
    const creator = person("cr");
    await fund(t, creator, 5000n, { kind: "payable" });
    const answer = await request({ subject: creator, amount: usd(999), idempotency_key: `k-${creator}` });
    expect(answer.status).toBe(422);
    expect(answer.body).toMatchObject({ code: "cashout.below_minimum", minimum: "1000", currency: "USD" });
  });

  it("refuses bad input naming the field (400)", async () => {
    const creator = person("cr");
    const cases: [Record<string, unknown>, string][] = [
      [{ subject: "gst_abc", amount: usd(1000), idempotency_key: "k" }, "subject"],
      [{ subject: creator, idempotency_key: "k" }, "amount"],
      [{ subject: creator, amount: usd(-5), idempotency_key: "k" }, "amount.minor_units"],
      [{ subject: creator, amount: { minor_units: 1000, currency: "usd" }, idempotency_key: "k" }, "amount.currency"],
      [{ subject: creator, amount: usd(1000) }, "idempotency_key"],
    ];
    for (const [body, field] of cases) {
      const answer = await request(body);
      expect({ status: answer.status, code: answer.body.code, field: answer.body.field }).toEqual({
        status: 400,
        code: "request.invalid",
        field,
      });
    }
  });

  it("is refused while the economy is frozen (409 economy.frozen)", async () => {
    const creator = person("cr");
    await fund(t, creator, 5000n, { kind: "payable" });
    await setFrozen(t, true);
    try {
      const answer = await request({ subject: creator, amount: usd(1000), idempotency_key: `k-${creator}` });
      expect(answer.status).toBe(409);
      expect(answer.body.code).toBe("economy.frozen");
    } finally {
      await setFrozen(t, false);
    }
    expect(await balances(creator)).toMatchObject({ creator_payable: "5000", pending_payouts: "0" });
  });
});

describe("reading cashouts", () => {
  it("reads one (billing.cashout.request); an unknown id is 404 cashout.not_found", async () => {
    const { cashout } = await requested();
    const read = await t.http("GET", `/billing/api/v1/cashouts/${cashout.id}`, { token: requester });
    expect(read.status).toBe(200);
    expect(read.body.cashout).toEqual(cashout);
    const missing = await t.http("GET", "/billing/api/v1/cashouts/co_nothing", { token: requester });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe("cashout.not_found");
  });

  it("lists newest first for the manager, filtered by subject and status, a page at a time", async () => {
    const creator = person("cr");
    await fund(t, creator, 10_000n, { kind: "payable" });
    const ids: string[] = [];
    for (const n of [1, 2, 3]) {
      const answer = await request({ subject: creator, amount: usd(1000), idempotency_key: `list-${creator}-${n}` });
      ids.push(answer.body.cashout.id);
    }
    clock.advance(ESCROW_MS);
    await deny(ids[0], { reason: "test" });

    const list = (query: string) =>
      t.http("GET", `/billing/api/v1/cashouts?subject=${creator}${query}`, { token: manager });
    const all = await list("");
    expect(all.status).toBe(200);
    expect(all.body.cashouts.cashouts.map((c: { id: string }) => c.id)).toEqual([...ids].reverse());
    expect(all.body.cashouts.next_cursor).toBe("");

    const first = await list("&limit=2");
    expect(first.body.cashouts.cashouts.map((c: { id: string }) => c.id)).toEqual([ids[2], ids[1]]);
    const second = await list(`&limit=2&cursor=${first.body.cashouts.next_cursor}`);
    expect(second.body.cashouts.cashouts.map((c: { id: string }) => c.id)).toEqual([ids[0]]);
    expect(second.body.cashouts.next_cursor).toBe("");

    const denied = await list("&status=CASHOUT_STATUS_DENIED");
    expect(denied.body.cashouts.cashouts.map((c: { id: string }) => c.id)).toEqual([ids[0]]);
    const pending = await list("&status=CASHOUT_STATUS_REQUESTED");
    expect(pending.body.cashouts.cashouts.map((c: { id: string }) => c.id)).toEqual([ids[2], ids[1]]);

    // A forged cursor (well-formed, but not the shape this list issues) is refused, never read as "from the start".
    const forged = (position: unknown[]) => `&cursor=${Buffer.from(JSON.stringify(position)).toString("base64url")}`;
    for (const [query, field] of [
      ["&limit=500", "limit"],
      ["&cursor=nope", "cursor"],
      [forged([1]), "cursor"],
      [forged(["cso_1", 2]), "cursor"],
    ]) {
      const bad = await list(query);
      expect({ status: bad.status, field: bad.body.field }).toEqual({ status: 400, field });
    }
    const badSubject = await t.http("GET", "/billing/api/v1/cashouts?subject=someone", { token: manager });
    expect({ status: badSubject.status, field: badSubject.body.field }).toEqual({ status: 400, field: "subject" });
  });

  it("takes a page size from 1 to 200: limit=0 is refused, not unset (400 request.invalid naming limit)", async () => {
    for (const limit of [0, 201]) {
      const answer = await t.http("GET", `/billing/api/v1/cashouts?limit=${limit}`, { token: manager });
      expect(answer.body, `limit=${limit}`).toMatchObject({ status: 400, code: "request.invalid", field: "limit" });
    }
    expect((await t.http("GET", "/billing/api/v1/cashouts?limit=1", { token: manager })).status).toBe(200);
  });
});

describe("approving a cashout", () => {
  it("waits for the escrow (409 cashout.in_escrow), then pays out with the payout reference and publishes billing.cashout.approved", async () => {
    const { creator, cashout } = await requested(2000);
    const early = await approve(cashout.id, { payout_reference: "po_1" });
    expect(early.status).toBe(409);
    expect(early.body).toMatchObject({ code: "cashout.in_escrow", escrow_until: cashout.escrow_until });

    clock.advance(ESCROW_MS);
    const answer = await approve(cashout.id, { payout_reference: "po_1" });
    expect(answer.status).toBe(200);
    expect(answer.body.cashout).toMatchObject({
      id: cashout.id,
      status: "CASHOUT_STATUS_APPROVED",
      payout_reference: "po_1",
      decided_by: "svc:payouts",
      decided_at: rfc3339(clock.now()),
    });
    expect(await balances(creator)).toMatchObject({ creator_payable: "3000", pending_payouts: "0" });
    const [latest] = await history(creator);
    expect(latest).toMatchObject({
      kind: "TRANSACTION_KIND_CASHOUT_APPROVAL",
      reference: { service: "billing", kind: "cashout", id: cashout.id },
    });
    expect(latest.entries).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          owner: "platform",
          kind: "ACCOUNT_KIND_PAYOUTS",
          amount: { minor_units: "2000", currency: "USD" },
        }),
        expect.objectContaining({
          owner: creator,
          kind: "ACCOUNT_KIND_PENDING_PAYOUT",
          amount: { minor_units: "-2000", currency: "USD" },
        }),
      ]),
    );
    expect(await eventsAbout(t, cashout.id)).toEqual(["billing.cashout.requested", "billing.cashout.approved"]);

    // A retry with the same reference answers the approved cashout; anything else is a second decision.
    const retry = await approve(cashout.id, { payout_reference: "po_1" });
    expect(retry.status).toBe(200);
    expect(retry.body).toEqual(answer.body);
    const other = await approve(cashout.id, { payout_reference: "po_2" });
    expect(other.status).toBe(409);
    expect(other.body).toMatchObject({ code: "cashout.decided", cashout_status: "approved" });
    const denial = await deny(cashout.id, { reason: "late" });
    expect(denial.status).toBe(409);
    expect(denial.body.code).toBe("cashout.decided");
    expect(await balances(creator)).toMatchObject({ creator_payable: "3000", pending_payouts: "0" });
    expect(await eventsAbout(t, cashout.id)).toHaveLength(2);
  });

  it("needs the payout reference (400 payout_reference); an unknown cashout is 404", async () => {
    const { cashout } = await requested();
    clock.advance(ESCROW_MS);
    const missing = await approve(cashout.id, {});
    expect({ status: missing.status, field: missing.body.field }).toEqual({ status: 400, field: "payout_reference" });
    const unknown = await approve("co_nothing", { payout_reference: "po_1" });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe("cashout.not_found");
  });

  it("is refused while the economy is frozen", async () => {
    const { cashout } = await requested();
    clock.advance(ESCROW_MS);
    await setFrozen(t, true);
    try {
      const answer = await approve(cashout.id, { payout_reference: "po_1" });
      expect(answer.status).toBe(409);
      expect(answer.body.code).toBe("economy.frozen");
    } finally {
      await setFrozen(t, false);
    }
    expect((await approve(cashout.id, { payout_reference: "po_1" })).status).toBe(200);
  });
});

describe("denying a cashout", () => {
  it("reverses the amount to creator payable, in escrow or after, and publishes billing.cashout.denied", async () => {
    const { creator, cashout } = await requested(2000);
    const answer = await deny(cashout.id, { reason: "documents missing" });
    expect(answer.status).toBe(200);
    expect(answer.body.cashout).toMatchObject({
      status: "CASHOUT_STATUS_DENIED",
      reason: "documents missing",
      decided_by: "svc:payouts",
    });
    expect(await balances(creator)).toMatchObject({ creator_payable: "5000", pending_payouts: "0" });
    const [latest] = await history(creator);
    expect(latest.kind).toBe("TRANSACTION_KIND_CASHOUT_DENIAL");
    expect(await eventsAbout(t, cashout.id)).toEqual(["billing.cashout.requested", "billing.cashout.denied"]);

    expect((await deny(cashout.id, { reason: "documents missing" })).body).toEqual(answer.body);
    clock.advance(ESCROW_MS);
    const approval = await approve(cashout.id, { payout_reference: "po_1" });
    expect(approval.status).toBe(409);
    expect(approval.body).toMatchObject({ code: "cashout.decided", cashout_status: "denied" });
    expect(await balances(creator)).toMatchObject({ creator_payable: "5000", pending_payouts: "0" });
  });

  it("takes a reason of at most 500 characters (400 reason)", async () => {
    const { cashout } = await requested();
    const answer = await deny(cashout.id, { reason: "x".repeat(501) });
    expect({ status: answer.status, field: answer.body.field }).toEqual({ status: 400, field: "reason" });
  });
});

describe("cashout-manage is granted on its own", () => {
  const routes = (id: string) => [
    { method: "GET", path: "/billing/api/v1/cashouts" },
    { method: "POST", path: `/billing/api/v1/cashouts/${id}/approve`, body: { payout_reference: "po_1" } },
    { method: "POST", path: `/billing/api/v1/cashouts/${id}/deny`, body: { reason: "no" } },
  ];

  it("refuses every other billing capability (403 auth.capability_missing) and manage held with any other (403 auth.separate_grant)", async () => {
    const { cashout } = await requested();
    clock.advance(ESCROW_MS);
    const allButManage = await t.token({ kind: "service", svc: "ops", caps: ALL_BUT_MANAGE });
    const manageAndMore = await t.token({
      kind: "service",
      svc: "ops",
      caps: ["billing.cashout.manage", "billing.balance.read"],
    });
    for (const route of routes(cashout.id)) {
      const without = await t.http(route.method, route.path, { token: allButManage, body: route.body });
      expect({ status: without.status, code: without.body.code }).toEqual({
        status: 403,
        code: "auth.capability_missing",
      });
      const mixed = await t.http(route.method, route.path, { token: manageAndMore, body: route.body });
      expect({ status: mixed.status, code: mixed.body.code }).toEqual({ status: 403, code: "auth.separate_grant" });
    }
    const read = await t.http("GET", `/billing/api/v1/cashouts/${cashout.id}`, { token: requester });
    expect(read.body.cashout.status).toBe("CASHOUT_STATUS_REQUESTED");
  });
});

describe("recycling payable", () => {
  const recycle = (body: Record<string, unknown>, token = requester) =>
    t.http("POST", "/billing/api/v1/recycle", { token, body });

  it("moves creator payable into the same subject's spendable credit and answers the balances after", async () => {
    const creator = person("cr");
    await fund(t, creator, 3000n, { kind: "payable" });
    const body = { subject: creator, amount: usd(1200), idempotency_key: `rc-${creator}` };
    const answer = await recycle(body);
    expect(answer.status).toBe(200);
    expect(answer.body.recycle).toMatchObject({
      subject: creator,
      amount: { minor_units: "1200", currency: "USD" },
      balance: { currency: "USD", spendable_credit: "1200", creator_payable: "1800", pending_payouts: "0" },
    });
    expect(answer.body.recycle.transaction_id).toMatch(/^ltx_/);
    const [latest] = await history(creator);
    expect(latest).toMatchObject({ id: answer.body.recycle.transaction_id, kind: "TRANSACTION_KIND_RECYCLE" });

    expect((await recycle(body)).body).toEqual(answer.body);
    expect(await balances(creator)).toMatchObject({ spendable_credit: "1200", creator_payable: "1800" });

    // Recycled credit is credit: never withdrawable.
    const cashout = await request({ subject: creator, amount: usd(1900), idempotency_key: `co-${creator}` });
    expect(cashout.status).toBe(409);
    expect(cashout.body.code).toBe("insufficient_funds");
  });

  it("refuses more than the payable (409 insufficient_funds), a missing key and bad input naming the field", async () => {
    const creator = person("cr");
    await fund(t, creator, 500n, { kind: "payable" });
    await fund(t, creator, 10_000n);
    const short = await recycle({ subject: creator, amount: usd(501), idempotency_key: `rc-${creator}` });
    expect(short.status).toBe(409);
    expect(short.body.code).toBe("insufficient_funds");
    for (const [body, field] of [
      [{ subject: creator, amount: usd(100) }, "idempotency_key"],
      [{ subject: "usr_", amount: usd(100), idempotency_key: "k" }, "subject"],
      [{ subject: creator, idempotency_key: "k" }, "amount"],
    ] as const) {
      const answer = await recycle(body);
      expect({ status: answer.status, field: answer.body.field }).toEqual({ status: 400, field });
    }
  });
});
