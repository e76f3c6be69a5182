import { beforeAll, describe, expect, it } from "vitest";
import { usePlatform } from "../support/platform.js";
import { eventsAbout } from "./checks.js";
import { fund, person } from "./support.js";

const t = usePlatform({ services: ["billing"] });
let admin: string;
let reader: string;

beforeAll(async () => {
  admin = await t.token({ kind: "service", svc: "ops", caps: ["billing.ledger.admin"] });
  reader = await t.token({ kind: "service", svc: "tips", caps: ["billing.balance.read"] });
});

let keys = 0;
const adjust = (body: object) =>
  t.http("POST", "/billing/api/v1/admin/adjustments", {
    token: admin,
    body: { reason: "goodwill", idempotency_key: `adj-${++keys}`, ...body },
  });
const balances = async (subject: string) =>
  (await t.http("GET", `/billing/api/v1/balances/${subject}`, { token: reader })).body.balances;
const money = (minor: number, currency = "USD") => ({ minor_units: minor, currency });
const line = (owner: string, kind: string, minor: number, currency = "USD") => ({
  owner,
  kind: `ACCOUNT_KIND_${kind}`,
  amount: money(minor, currency),
});
const platform = (minor: number, currency = "USD") => line("", "ADJUSTMENTS", minor, currency);

describe("manual adjustments", () => {
  it("posts balanced lines with their reason (201) as one adjustment transaction, and publishes it", async () => {
    const fan = person("fan");
    const answer = await adjust({ reason: "refund of ticket 7", lines: [line(fan, "CREDIT", 500), platform(-500)] });
    expect(answer.status).toBe(201);
    const adjustment = answer.body.adjustment;
    expect(adjustment).toMatchObject({
      kind: "TRANSACTION_KIND_ADJUSTMENT",
      reason: "refund of ticket 7",
      created_by: "svc:ops",
    });
    expect(adjustment.id).toMatch(/^ltx_/);
    expect(adjustment.entries).toHaveLength(2);
    expect(adjustment.entries).toEqual(
      expect.arrayContaining([
        {
          owner: fan,
          kind: "ACCOUNT_KIND_CREDIT",
          amount: { minor_units: "500", currency: "USD" },
          balance_after: "500",
        },
        {
          owner: "platform",
          kind: "ACCOUNT_KIND_ADJUSTMENTS",
          amount: { minor_units: "-500", currency: "USD" },
          balance_after: expect.any(String),
        },
      ]),
    );
    expect(await balances(fan)).toEqual([expect.objectContaining({ currency: "USD", spendable_credit: "500" })]);
    expect(await eventsAbout(t, adjustment.id)).toEqual(["billing.adjustment.posted"]);
  });

  it("takes money off a subject and moves it between subjects and currencies, each balancing on its own", async () => {
    const [fan, creator] = [person("fan"), person("cr")];
    await fund(t, fan, 1000n);
    const answer = await adjust({
      lines: [
        line(fan, "CREDIT", -300),
        line(creator, "PAYABLE", 200),
        platform(100),
        line(creator, "CREDIT", 40, "EUR"),
        platform(-40, "EUR"),
      ],
    });
    expect(answer.status).toBe(201);
    expect(await balances(fan)).toEqual([expect.objectContaining({ currency: "USD", spendable_credit: "700" })]);
    expect(await balances(creator)).toEqual([
      expect.objectContaining({ currency: "EUR", spendable_credit: "40" }),
      expect.objectContaining({ currency: "USD", creator_payable: "200" }),
    ]);
  });

  it("refuses lines that do not balance in a currency (422 ledger.unbalanced) and moves nothing", async () => {
    const fan = person("fan");
    const answer = await adjust({
      lines: [line(fan, "CREDIT", 500), platform(-400), line(fan, "PAYABLE", 10, "EUR"), platform(-10, "EUR")],
    });
    expect(answer.status).toBe(422);
    expect(answer.body).toMatchObject({ code: "ledger.unbalanced", currency: "USD", sum: "100" });
    expect(await balances(fan)).toEqual([]);
  });

  it("refuses a line taking a subject below zero (409 insufficient_funds) and moves nothing", async () => {
    const fan = person("fan");
    await fund(t, fan, 100n);
    const answer = await adjust({ lines: [line(fan, "CREDIT", -101), platform(101)] });
    expect(answer.status).toBe(409);
    expect(answer.body).toMatchObject({ code: "insufficient_funds", subject: fan });
    expect((await balances(fan))[0].spendable_credit).toBe("100");
  });

  it("applies a retried key once, answering the first result; the key with another body is refused", async () => {
    const fan = person("fan");
    const body = { idempotency_key: `once-${fan}`, lines: [line(fan, "CREDIT", 25), platform(-25)] };
    const first = await adjust(body);
    const again = await adjust(body);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect((await balances(fan))[0].spendable_credit).toBe("25");
    const other = await adjust({ ...body, reason: "another reason" });
    expect(other.status).toBe(409);
    expect(other.body.code).toBe("idempotency.mismatch");
  });

  it("takes the idempotency key from the Idempotency-Key header too", async () => {
    const fan = person("fan");
    const body = { reason: "goodwill", lines: [line(fan, "CREDIT", 5), platform(-5)] };
    const headers = { "idempotency-key": `hdr-${fan}` };
    const first = await t.http("POST", "/billing/api/v1/admin/adjustments", { token: admin, body, headers });
    const again = await t.http("POST", "/billing/api/v1/admin/adjustments", { token: admin, body, headers });
    expect([first.status, again.status]).toEqual([201, 201]);
    expect((await balances(fan))[0].spendable_credit).toBe("5");
  });

  it("refuses bad input with 400 naming the field", async () => {
    const fan = person("fan");
    const ok = [line(fan, "CREDIT", 5), platform(-5)];
    const hold = { subject: fan, release_to: "ACCOUNT_KIND_CREDIT", amount: money(5) };
    for (const [body, field] of [
      [{ reason: "", lines: ok }, "reason"],
      [{ reason: "x".repeat(501), lines: ok }, "reason"],
      [{ idempotency_key: "", lines: ok }, "idempotency_key"],
      [{}, "lines"],
      [{ lines: [line(fan, "CREDIT", 5)] }, "lines"],
      [{ lines: ok, import_hold: hold }, "import_hold"],
      [{ lines: [line(fan, "PENDING_PAYOUT", 5), platform(-5)] }, "lines[0].kind"],
      [{ lines: [line(fan, "CREDIT", 5), line("provider", "PROVIDER_CLEARING", -5)] }, "lines[1].kind"],
      [{ lines: [line(fan, "CREDIT", 5), line("", "IMPORTS", -5)] }, "lines[1].kind"],
      [{ lines: [line(fan, "UNSPECIFIED", 5), platform(-5)] }, "lines[0].kind"],
      [{ lines: [line("gst_x1", "CREDIT", 5), platform(-5)] }, "lines[0].owner"],
      [{ lines: [line(fan, "CREDIT", 5), line("platform", "ADJUSTMENTS", -5)] }, "lines[1].owner"],
      [{ lines: [line(fan, "CREDIT", 0), platform(0)] }, "lines[0].amount.minor_units"],
      [{ lines: [line(fan, "CREDIT", 5, "usd"), platform(-5)] }, "lines[0].amount.currency"],
      [{ lines: [{ owner: fan, kind: "ACCOUNT_KIND_CREDIT" }, platform(-5)] }, "lines[0].amount"],
      [{ lines: [line(fan, "CREDIT", 5), line(fan, "CREDIT", 5), platform(-10)] }, "lines[1]"],
    ] as const) {
      const answer = await adjust(body);
      expect({ field, status: answer.status, code: answer.body.code, named: answer.body.field }).toEqual({
        field,
        status: 400,
        code: "request.invalid",
        named: field,
      });
    }
    expect(await balances(fan)).toEqual([]);
  });
});
