import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { SubscriptionSchema, SubscriptionStatus } from "../../gen/pf/billing/v1/subscriptions_pb.js";
import { EntitlementChangedSchema } from "../../gen/pf/billing/v1/events_pb.js";
import type { Clock } from "../../services/kit/runtime/clock.js";
import { billingOf, fund } from "../billing/support.js";
import { usePlatform } from "../support/platform.js";
import { applyEntitlementEvent, createPlan, expectStatus, person, serviceToken, userToken } from "./support.js";

/** Time that moves 10 ms on every reading, so each step of a checkout happens at its own instant. */
class TickingClock implements Clock {
  private current = new Date("2026-09-01T00:00:00Z").getTime();
  now(): Date {
    this.current += 10;
    return new Date(this.current);
  }
}

const t = usePlatform({
  services: ["vip", "billing"],
  clock: new TickingClock(),
  env: { PF_BILLING_SWEEP_EVERY_MS: "2000000000" },
});

describe("a checkout from credit", () => {
  it("projects billing's answer as of the call, so a change billing makes right after it is not lost", async () => {
    const creator = person("cr");
    const plan = await createPlan(t, await userToken(t, creator), { publish: true });
    const fan = person("fan");
    await fund(t, fan, 1_000n);
    const bought = expectStatus(
      await t.http("POST", "/vip/api/v1/checkout", {
        token: await userToken(t, fan),
        body: { plan_id: plan.id, paid_via: "PAID_VIA_CREDIT", idempotency_key: "k1" },
      }),
      201,
    ).body.membership;
    const [row] = await billingOf(t)
      .orm.em.getConnection()
      .execute<{ started_at: Date }[]>(`select started_at from billing.subscriptions where id = ?`, [
        bought.subscription_id,
      ]);
    // Billing ended it just after answering, before this service wrote the membership; its event arrives now.
    const endedAt = new Date(new Date(row.started_at).getTime() + 1);
    expect(endedAt.getTime()).toBeLessThan(new Date(bought.created_at).getTime());
    const ended = create(EntitlementChangedSchema, {
      subscription: create(SubscriptionSchema, {
        id: bought.subscription_id,
        subject: fan,
        streamer: creator,
        planId: plan.id,
        planVersion: 1n,
        status: SubscriptionStatus.ENDED,
        validUntil: timestampFromDate(endedAt),
        endedAt: timestampFromDate(endedAt),
      }),
      change: "ended",
      occurredAt: timestampFromDate(endedAt),
    });
    await applyEntitlementEvent(t, ended, `end-${fan}`);
    const check = await t.http(
      "GET",
      `/vip/api/v1/entitlements/check?subject=${fan}&creator=${creator}&mode=CHECK_MODE_PROJECTION`,
      { token: await serviceToken(t) },
    );
    expect(expectStatus(check, 200).body).toMatchObject({ member: false, status: "ENTITLEMENT_STATUS_NOT_MEMBER" });
  });
});
