import { beforeAll, describe, expect, it } from "vitest";
import { usePlatform } from "../support/platform.js";
import { billingOf, fund, person } from "./support.js";

const t = usePlatform({ services: ["billing"] });
let admin: string;
let tips: string;
let reader: string;

beforeAll(async () => {
  admin = await t.token({ kind: "service", svc: "ops", caps: ["billing.ledger.admin"] });
  tips = await t.token({ kind: "service", svc: "tips", caps: ["billing.transfer.create"] });
  reader = await t.token({ kind: "service", svc: "tips", caps: ["billing.balance.read"] });
});

const PATH = "/billing/api/v1/admin/freeze";
const readSwitch = () => t.http("GET", PATH, { token: admin });
const setSwitch = (body: unknown) => t.http("POST", PATH, { token: admin, body });
const transfer = (from: string, to: string) =>
  t.http("POST", "/billing/api/v1/transfers", {
    token: tips,
    body: {
      from_subject: from,
      to_subject: to,
      amount: { minor_units: 10, currency: "USD" },
      idempotency_key: `k-${from}-${Date.now()}`,
    },
  });
const adjust = (subject: string) =>
  t.http("POST", "/billing/api/v1/admin/adjustments", {
    token: admin,
    body: {
      reason: "goodwill",
      idempotency_key: `adj-${subject}-${Date.now()}`,
      lines: [
        { owner: subject, kind: "ACCOUNT_KIND_CREDIT", amount: { minor_units: 5, currency: "USD" } },
        { owner: "", kind: "ACCOUNT_KIND_ADJUSTMENTS", amount: { minor_units: -5, currency: "USD" } },
      ],
    },
  });
const economyEvents = async () =>
  (
    await billingOf(t)
      .orm.em.fork()
      .getConnection()
      .execute<{ subject: string; payload: string }[]>(
        `select subject, payload from billing.outbox where subject like 'billing.economy.%' order by id`,
      )
  ).map((row) => ({ subject: row.subject, economy: JSON.parse(row.payload).economy }));

describe("the economy freeze switch", () => {
  it("reads thawed at first, with no provider events held", async () => {
    const answer = await readSwitch();
    expect(answer.status).toBe(200);
    expect(answer.body.economy).toMatchObject({ frozen: false, held_events: "0" });
  });

  it("freezes: ledger writes are refused, reads are served; the thaw lets writes through again", async () => {
    const [fan, creator] = [person("fan"), person("cr")];
    await fund(t, fan, 1000n);

    const frozen = await setSwitch({ frozen: true, reason: "incident 42" });
    expect(frozen.status).toBe(200);
    expect(frozen.body.economy).toMatchObject({
      frozen: true,
      reason: "incident 42",
      changed_by: "svc:ops",
      held_events: "0",
    });
    expect(frozen.body.economy.changed_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect((await readSwitch()).body.economy).toEqual(frozen.body.economy);

    for (const write of [await transfer(fan, creator), await adjust(fan)]) {
      expect({ status: write.status, code: write.body.code }).toEqual({ status: 409, code: "economy.frozen" });
    }
    const balance = await t.http("GET", `/billing/api/v1/balances/${fan}`, { token: reader });
    expect(balance.status).toBe(200);
    expect(balance.body.balances[0].spendable_credit).toBe("1000");

    const thawed = await setSwitch({ frozen: false, reason: "resolved" });
    expect(thawed.body.economy).toMatchObject({ frozen: false, reason: "resolved", changed_by: "svc:ops" });
    expect((await transfer(fan, creator)).status).toBe(201);
    expect((await adjust(fan)).status).toBe(201);

    expect(await economyEvents()).toEqual([
      { subject: "billing.economy.frozen", economy: expect.objectContaining({ frozen: true, reason: "incident 42" }) },
      { subject: "billing.economy.thawed", economy: expect.objectContaining({ frozen: false, reason: "resolved" }) },
    ]);
  });

  it("answers the state it already has unchanged, with no event", async () => {
    const before = await readSwitch();
    const events = (await economyEvents()).length;
    const again = await setSwitch({ frozen: false, reason: "another reason" });
    expect(again.status).toBe(200);
    expect(again.body.economy).toEqual(before.body.economy);
    expect((await economyEvents()).length).toBe(events);
  });

  it("counts the provider events held for the thaw", async () => {
    // Planted while frozen, so the provider-events worker leaves it held; removed before the thaw.
    const connection = billingOf(t).orm.em.fork().getConnection();
    expect((await setSwitch({ frozen: true, reason: "count" })).status).toBe(200);
    await connection.execute(
      `insert into billing.provider_events (id, provider, provider_event_id, type, payload, status, received_at)
       values ('pev_held1', 'test', 'evt-held-1', 'payment.captured', '{}', 'held', now())`,
    );
    try {
      expect((await readSwitch()).body.economy.held_events).toBe("1");
    } finally {
      await connection.execute(`delete from billing.provider_events where id = 'pev_held1'`);
      await setSwitch({ frozen: false, reason: "counted" });
    }
  });

  it("refuses a missing frozen or reason, and a reason over 500 characters (400 naming the field)", async () => {
    for (const [body, field] of [
      [{ reason: "why" }, "frozen"],
      [{ frozen: true }, "reason"],
      [{ frozen: true, reason: "  " }, "reason"],
      [{ frozen: true, reason: "x".repeat(501) }, "reason"],
    ] as const) {
      const answer = await setSwitch(body);
      expect({ status: answer.status, code: answer.body.code, field: answer.body.field }).toEqual({
        status: 400,
        code: "request.invalid",
        field,
      });
    }
    expect((await readSwitch()).body.economy.frozen).toBe(false);
  });
});
