import { beforeAll, describe, expect, it } from "vitest";
import { usePlatform } from "../support/platform.js";
import { eventsAbout } from "./checks.js";
import { deliver, orderOf, testProvider } from "./payments.js";
import { person } from "./support.js";

const t = usePlatform({ services: ["billing"] });
let tips: string;
let reader: string;
let admin: string;

beforeAll(async () => {
  tips = await t.token({ kind: "service", svc: "tips", caps: ["billing.intent.create"] });
  reader = await t.token({ kind: "service", svc: "tips", caps: ["billing.balance.read"] });
  admin = await t.token({ kind: "service", svc: "ops", caps: ["billing.ledger.admin"] });
});

const usd = (minor: number) => ({ minor_units: minor, currency: "USD" });
const createIntent = (body: unknown) => t.http("POST", "/billing/api/v1/intents", { token: tips, body });
const balanceOf = async (subject: string) =>
  (await t.http("GET", `/billing/api/v1/balances/${subject}`, { token: reader })).body.balances[0];
const imbalancesAbout = async (...refs: string[]) => {
  const answer = await t.http("GET", "/billing/api/v1/admin/reconcile", { token: admin });
  return answer.body.reconciliation.imbalances.filter((imbalance: { ref: string }) => refs.includes(imbalance.ref));
};

describe("a tip intent (product tip)", () => {
  it("is priced at its face value and settles into the creator's payable in one purchase posting", async () => {
    const [buyer, creator] = [person("sup"), person("cre")];
    const reference = { service: "tips", kind: "interaction", id: "int_1" };
    const created = await createIntent({ subject: buyer, tip: { creator, amount: usd(750) }, reference });
    expect(created.status).toBe(201);
    expect(created.body.intent).toMatchObject({
      tip: { creator, amount: { minor_units: "750", currency: "USD" } },
      price: { minor_units: "750" },
      reference,
    });
    const id = created.body.intent.id;
    const provider = testProvider(t);
    await provider.approve(orderOf(created));
    await provider.captureOrder(orderOf(created));
    const captured = (await provider.deliveries(orderOf(created))).find((d) => d.type === "payment.captured")!;
    expect((await deliver(t, captured)).body.status).toBe("PROVIDER_EVENT_STATUS_APPLIED");

    const settled = await t.http("GET", `/billing/api/v1/intents/${id}`, { token: tips });
    expect(settled.body.intent).toMatchObject({ status: "INTENT_STATUS_SETTLED", tip: { creator } });
    expect(await balanceOf(creator)).toMatchObject({ currency: "USD", creator_payable: "750", spendable_credit: "0" });
    expect(await balanceOf(buyer)).toBeUndefined();
    const history = await t.http("GET", `/billing/api/v1/balances/${creator}/transactions`, { token: reader });
    expect(history.body.transactions).toHaveLength(1);
    expect(history.body.transactions[0]).toMatchObject({
      kind: "TRANSACTION_KIND_PURCHASE",
      reference: { service: "billing", kind: "intent", id },
    });
    expect(
      history.body.transactions[0].entries
        .map((e: { kind: string; amount: { minor_units: string } }) => [e.kind, e.amount.minor_units])
        .sort(),
    ).toEqual([
      ["ACCOUNT_KIND_PAYABLE", "750"],
      ["ACCOUNT_KIND_PROVIDER_CLEARING", "-750"],
    ]);
    expect(await eventsAbout(t, id)).toContain("billing.intent.settled");
    expect(await imbalancesAbout(id, creator, buyer, history.body.transactions[0].id)).toEqual([]);
  });

  it("refuses an amount outside the bounds of credit bought by amount (422), an unsold currency (422), tipping oneself (400)", async () => {
    const buyer = person("sup");
    const over = await createIntent({ subject: buyer, tip: { creator: person("cre"), amount: usd(100_001) } });
    expect(over.body).toMatchObject({ status: 422, code: "billing.amount_out_of_range" });
    const under = await createIntent({ subject: buyer, tip: { creator: person("cre"), amount: usd(99) } });
    expect(under.body).toMatchObject({ status: 422, code: "billing.amount_out_of_range" });
    const yen = await createIntent({
      subject: buyer,
      tip: { creator: person("cre"), amount: { minor_units: 500, currency: "JPY" } },
    });
    expect(yen.body).toMatchObject({ status: 422, code: "billing.unknown_product" });
    const self = await createIntent({ subject: buyer, tip: { creator: buyer, amount: usd(500) } });
    expect(self.body).toMatchObject({ status: 400, code: "request.invalid", field: "tip.creator" });
    const noAmount = await createIntent({ subject: buyer, tip: { creator: person("cre") } });
    expect(noAmount.body).toMatchObject({ status: 400, field: "tip.amount" });
  });

  it("a declined tip intent books nothing", async () => {
    const [buyer, creator] = [person("sup"), person("cre")];
    const created = await createIntent({ subject: buyer, tip: { creator, amount: usd(500) } });
    expect((await deliver(t, await testProvider(t).decline(orderOf(created), "card_declined"))).body.status).toBe(
      "PROVIDER_EVENT_STATUS_APPLIED",
    );
    expect(await balanceOf(creator)).toBeUndefined();
    expect(await eventsAbout(t, created.body.intent.id)).toContain("billing.intent.declined");
  });
});
