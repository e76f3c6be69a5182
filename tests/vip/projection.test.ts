import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { beforeAll, describe, expect, it } from "vitest";
import { SubscriptionSchema, SubscriptionStatus } from "../../gen/pf/billing/v1/subscriptions_pb.js";
import { EntitlementChangedSchema } from "../../gen/pf/billing/v1/events_pb.js";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { usePlatform } from "../support/platform.js";
import { applyEntitlementEvent, createPlan, expectStatus, person, serviceToken, userToken } from "./support.js";

// The consumer's handler is driven directly, in the order a redelivery or a slow publisher may bring billing's events.
const clock = new ManualClock(new Date("2026-08-01T00:00:00Z"));
const t = usePlatform({ services: ["vip"], clock, env: { PF_VIP_ENTITLEMENT_GRACE_SECONDS: "3600" } });
const DAY = 86_400_000;
let staff: string;

beforeAll(async () => {
  staff = await serviceToken(t);
});

const at = (days: number) => new Date(clock.now().getTime() + days * DAY);
let seq = 0;

/** Applies one billing.entitlement.changed as the durable consumer does. */
async function deliver(
  fan: string,
  creator: string,
  change: string,
  occurredAt: Date,
  validUntil: Date,
  status = SubscriptionStatus.ACTIVE,
  planId = "pln_1",
) {
  const event = create(EntitlementChangedSchema, {
    subscription: create(SubscriptionSchema, {
      id: "sub_1",
      subject: fan,
      streamer: creator,
      planId,
      planVersion: 1n,
      status,
      validUntil: timestampFromDate(validUntil),
    }),
    change,
    occurredAt: timestampFromDate(occurredAt),
  });
  await applyEntitlementEvent(t, event, `ev${++seq}`);
}

const projected = (fan: string, creator: string) =>
  t
    .http("GET", `/vip/api/v1/entitlements/check?subject=${fan}&creator=${creator}&mode=CHECK_MODE_PROJECTION`, {
      token: staff,
    })
    .then((a) => expectStatus(a, 200).body);

describe("the projection of billing's entitlement events", () => {
  it("takes a renewal's later valid_until, and an older event arriving late never rolls it back", async () => {
    const [fan, creator] = [person("fan"), person("cr")];
    await deliver(fan, creator, "renewed", at(0), at(60));
    await deliver(fan, creator, "started", at(-30), at(30));
    expect(await projected(fan, creator)).toMatchObject({
      member: true,
      status: "ENTITLEMENT_STATUS_MEMBER",
      valid_until: at(60).toISOString().replace(".000Z", "Z"),
    });
  });

  it("keeps a cancellation's member until valid_until; an ended one stays ended whatever older event comes after", async () => {
    const [fan, creator] = [person("fan"), person("cr")];
    await deliver(fan, creator, "started", at(-1), at(29));
    await deliver(fan, creator, "canceled", at(0), at(29), SubscriptionStatus.CANCELED);
    expect(await projected(fan, creator)).toMatchObject({ member: true, status: "ENTITLEMENT_STATUS_MEMBER" });
    await deliver(fan, creator, "ended", at(0.5), at(0.5), SubscriptionStatus.ENDED);
    await deliver(fan, creator, "renewed", at(0.25), at(59));
    expect(await projected(fan, creator)).toMatchObject({ member: false, status: "ENTITLEMENT_STATUS_NOT_MEMBER" });
  });
});

describe("memberships known only from billing's events", () => {
  // This platform runs no billing: it never answers, so the projection answers, saying so.
  it("are answered from the projection, joined to the plan version, labelled with the projection's age", async () => {
    const [fan, creator] = [person("fan"), person("cr")];
    const plan = await createPlan(t, await userToken(t, creator), { publish: true });
    await deliver(fan, creator, "started", at(0), at(30), SubscriptionStatus.ACTIVE, plan.id);
    clock.advance(45_000);
    const answer = expectStatus(await t.http("GET", `/vip/api/v1/memberships/${fan}`, { token: staff }), 200).body;
    expect(answer).toMatchObject({
      subject: fan,
      source: "SOURCE_PROJECTION",
      billing_unavailable: true,
      age_seconds: "45",
    });
    expect(answer.memberships).toEqual([
      expect.objectContaining({
        origin: "MEMBERSHIP_ORIGIN_BILLING",
        creator,
        plan_id: plan.id,
        subscription_id: "sub_1",
        plan_version: expect.objectContaining({ version: "1" }),
        preferences: { announce: false, notifications: false },
        entitlement: expect.objectContaining({
          member: true,
          status: "ENTITLEMENT_STATUS_MEMBER",
          source: "SOURCE_PROJECTION",
          billing_unavailable: true,
        }),
      }),
    ]);
    // Once billing ends it, it is no membership any more.
    await deliver(fan, creator, "ended", at(0), at(0), SubscriptionStatus.ENDED, plan.id);
    expect(
      expectStatus(await t.http("GET", `/vip/api/v1/memberships/${fan}`, { token: staff }), 200).body.memberships,
    ).toEqual([]);
  });
});
