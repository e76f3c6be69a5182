import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { beforeAll, describe, expect, it } from "vitest";
import { SubscriptionSchema, SubscriptionStatus } from "../../gen/pf/billing/v1/billing_pb.js";
import { EntitlementChangedSchema } from "../../gen/pf/billing/v1/events_pb.js";
import { ManualClock } from "../../services/kit/clock.js";
import { entitlementsConsumer } from "../../services/vip/events.js";
import { usePlatform } from "../support/platform.js";
import { expectStatus, person, serviceToken } from "./support.js";

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
async function deliver(fan: string, creator: string, change: string, occurredAt: Date, validUntil: Date, status = SubscriptionStatus.ACTIVE) {
  const event = create(EntitlementChangedSchema, {
    subscription: create(SubscriptionSchema, {
      id: "sub_1", subject: fan, streamer: creator, planId: "pln_1", planVersion: 1n, status, validUntil: timestampFromDate(validUntil),
    }),
    change,
    occurredAt: timestampFromDate(occurredAt),
  });
  await t.platform.contexts.get("vip")!.transaction((em) => entitlementsConsumer.handle(event, em, { id: `ev${++seq}`, subject: entitlementsConsumer.subject }));
}

const projected = (fan: string, creator: string) =>
  t.http("GET", `/vip/api/v1/entitlements/check?subject=${fan}&creator=${creator}&mode=CHECK_MODE_PROJECTION`, { token: staff })
    .then((a) => expectStatus(a, 200).body);

describe("the projection of billing's entitlement events", () => {
  it("takes a renewal's later valid_until, and an older event arriving late never rolls it back", async () => {
    const [fan, creator] = [person("fan"), person("cr")];
    await deliver(fan, creator, "renewed", at(0), at(60));
    await deliver(fan, creator, "started", at(-30), at(30));
    expect(await projected(fan, creator)).toMatchObject({ member: true, status: "ENTITLEMENT_STATUS_MEMBER", valid_until: at(60).toISOString().replace(".000Z", "Z") });
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
