import { describe, expect, it, vi } from "vitest";
import { usePlatform } from "../support/platform.js";
import { as, balanceReader, newKey, payAtProvider, person, setProfile, usd, userToken } from "./support.js";

// The recovery worker (which would also read billing back) stays out of the way: only billing's events settle here.
const t = usePlatform({
  services: ["tips", "billing"],
  env: { PF_TIPS_RECOVERY_EVERY_MS: "3600000", PF_TIPS_RECOVERY_AFTER_MS: "3600000" },
});

describe("a tip by intent, settled by billing's events alone", () => {
  it("the provider's webhook settles the intent in billing; billing.intent.settled reaches tips' durable consumer and settles the tip", async () => {
    const [creator, supporter] = [person("cre"), person("sup")];
    await setProfile(t, creator);
    const creatorCall = as(t, await userToken(t, creator));
    const goal = (await creatorCall("POST", "/goals", { title: "Desk", target: usd(2000) })).body.goal;
    const supporterCall = as(t, await userToken(t, supporter));
    const answer = await supporterCall(
      "POST",
      "/checkout",
      { creator, amount: usd(700), goal_id: goal.id, payment_method: "PAYMENT_METHOD_INTENT" },
      { "idempotency-key": newKey() },
    );
    expect(answer.body.checkout.payment_state).toBe("PAYMENT_STATE_PENDING");
    await payAtProvider(t, answer.body.checkout.checkout_url);
    const read = async () => (await supporterCall("GET", `/interactions/${answer.body.checkout.id}`)).body.interaction;
    await vi.waitFor(async () => expect((await read()).payment_state).toBe("PAYMENT_STATE_SETTLED"), {
      timeout: 15_000,
      interval: 100,
    });
    expect((await creatorCall("GET", `/goals/${goal.id}`)).body.goal.total.minor_units).toBe("700");
    expect(await (await balanceReader(t))(creator)).toEqual([expect.objectContaining({ creator_payable: "700" })]);
  });
});
