import { beforeAll, describe, expect, it } from "vitest";
import { outboxEvents } from "../support/outbox.js";
import { usePlatform } from "../support/platform.js";
import { as, balanceReader, billingTransactionsFor, person, usd, userToken } from "./support.js";

const t = usePlatform({ services: ["tips", "billing"] });
let recorder: string;

beforeAll(async () => {
  recorder = await t.token({ kind: "service", svc: "kofi", caps: ["tips.interaction.record"] });
});

const record = (body: unknown) => t.http("POST", "/tips/api/v1/interactions/external", { token: recorder, body });

describe("external interactions", () => {
  it("are recorded once per (provider, provider_ref): 201 first, 200 duplicate with the first record", async () => {
    const creator = person("cre");
    const ref = `ref-${Date.now()}`;
    const first = await record({
      creator,
      provider: "kofi",
      provider_ref: ref,
      amount: usd(500),
      message: "thanks",
      supporter_name: "Ann",
    });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({
      duplicate: false,
      interaction: {
        creator,
        supporter: "",
        kind: "INTERACTION_KIND_EXTERNAL",
        payment_method: "PAYMENT_METHOD_EXTERNAL",
        payment_state: "PAYMENT_STATE_EXTERNAL",
        delivery_state: "DELIVERY_STATE_DELIVERED",
        provider: "kofi",
        provider_ref: ref,
        supporter_name: "Ann",
        transaction_id: "",
      },
    });
    const again = await record({ creator, provider: "kofi", provider_ref: ref, amount: usd(999), message: "other" });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ ...first.body, duplicate: true });
    const otherProvider = await record({ creator, provider: "streamlabs", provider_ref: ref, amount: usd(100) });
    expect(otherProvider.status).toBe(201);
    expect(otherProvider.body.interaction.id).not.toBe(first.body.interaction.id);
    expect((await outboxEvents(t, "tips", first.body.interaction.id)).map((e) => e.subject)).toEqual([
      "tips.interaction.settled",
    ]);
  });

  it("never touch billing: no transaction, no balance", async () => {
    const creator = person("cre");
    const answer = await record({ creator, provider: "kofi", provider_ref: `b-${Date.now()}`, amount: usd(700) });
    expect(await billingTransactionsFor(t, answer.body.interaction.id)).toBe(0);
    expect(await (await balanceReader(t))(creator)).toEqual([]);
    const list = await as(t, await userToken(t, creator))("GET", "/interactions");
    expect(list.body.interactions.map((i: { id: string }) => i.id)).toEqual([answer.body.interaction.id]);
  });

  it("refuse bad input by field, and a goal not of the creator (404)", async () => {
    const creator = person("cre");
    expect((await record({ creator, provider: "Ko Fi", provider_ref: "r", amount: usd(1) })).body).toMatchObject({
      status: 400,
      field: "provider",
    });
    expect((await record({ creator, provider: "kofi", provider_ref: "", amount: usd(1) })).body).toMatchObject({
      status: 400,
      field: "provider_ref",
    });
    expect((await record({ creator, provider: "kofi", provider_ref: "r" })).body).toMatchObject({
      status: 400,
      field: "amount",
    });
    expect((await record({ creator: "bob", provider: "kofi", provider_ref: "r", amount: usd(1) })).body).toMatchObject({
      status: 400,
      field: "creator",
    });
    expect(
      (await record({ creator, provider: "kofi", provider_ref: "r", amount: usd(1), goal_id: "gol_nope" })).body,
    ).toMatchObject({ status: 404, code: "goal.not_found" });
  });

  it("count toward an open goal of the creator, and are refused on a closed one (its history stays as it was)", async () => {
    const creator = person("cre");
    const creatorCall = as(t, await userToken(t, creator));
    const goal = (await creatorCall("POST", "/goals", { title: "Lamp", target: usd(1000) })).body.goal;
    expect(
      (await record({ creator, provider: "kofi", provider_ref: `open-${goal.id}`, amount: usd(250), goal_id: goal.id }))
        .status,
    ).toBe(201);
    expect((await creatorCall("POST", `/goals/${goal.id}/close`)).status).toBe(200);
    const late = await record({
      creator,
      provider: "kofi",
      provider_ref: `late-${goal.id}`,
      amount: usd(250),
      goal_id: goal.id,
    });
    expect(late.body).toMatchObject({ status: 409, code: "goal.closed" });
    expect((await creatorCall("GET", `/goals/${goal.id}`)).body.goal.total.minor_units).toBe("250");
  });
});
