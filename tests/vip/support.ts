import type { MessageShape } from "@bufbuild/protobuf";
import { expect } from "vitest";
import type { EntitlementChangedSchema } from "../../gen/pf/billing/v1/events_pb.js";
import { entitlementsConsumer } from "../../services/vip/consumers/entitlements.js";
import type { VipContext } from "../../services/vip/context.js";
import type { HttpAnswer, TestPlatform } from "../support/platform.js";
import { until as holds } from "../support/until.js";

let seq = 0;
/** A fresh usr_ subject. */
export const person = (tag = "p") => `usr_${tag}${++seq}x${Date.now().toString(36)}`;

/** A person's own user token. */
export const userToken = (t: TestPlatform, sub: string) => t.token({ kind: "user", sub });

/** A first-party service holding every membership capability (acting for nobody: the grant, staff). */
export const serviceToken = (t: TestPlatform) =>
  t.token({
    kind: "service",
    svc: "community",
    caps: [
      "vip.plan.list",
      "vip.plan.create",
      "vip.plan.update",
      "vip.plan.archive",
      "vip.perk.list",
      "vip.perk.create",
      "vip.perk.update",
      "vip.membership.checkout",
      "vip.membership.status",
      "vip.creator.members.list",
      "vip.entitlement.check",
      "vip.resource.policy.get",
      "vip.resource.policy.set",
      "vip.resource.policy.evaluate",
    ],
  });

export function expectStatus(answer: HttpAnswer, status: number, code?: string): HttpAnswer {
  expect(answer.status, JSON.stringify(answer.body)).toBe(status);
  if (code) expect(answer.body.code).toBe(code);
  return answer;
}

/** Creates a perk of the token's person (201). */
export async function createPerk(t: TestPlatform, token: string, body: Record<string, unknown> = {}) {
  const answer = await t.http("POST", "/vip/api/v1/perks", {
    token,
    body: { kind: "PERK_KIND_BADGE", name: "Gold badge", ...body },
  });
  return expectStatus(answer, 201).body.perk;
}

/** Creates a plan of the token's person (201); published at once with `publish`. */
export async function createPlan(t: TestPlatform, token: string, body: Record<string, unknown> = {}) {
  const answer = await t.http("POST", "/vip/api/v1/plans", { token, body: { name: "Gold", tier: "tier_1", ...body } });
  return expectStatus(answer, 201).body.plan;
}

/** A new goal of the token's person at tips (201), as the resource a rule gates (tips must run beside vip). */
export async function goalResource(t: TestPlatform, token: string) {
  const answer = await t.http("POST", "/tips/api/v1/goals", {
    token,
    body: { title: "Mic", target: { minor_units: 1000, currency: "USD" } },
  });
  return { service: "tips", kind: "goal", id: expectStatus(answer, 201).body.goal.id as string };
}

/** Applies one billing.entitlement.changed as the durable consumer does: in vip's transaction, with vip's own context. */
export function applyEntitlementEvent(
  t: TestPlatform,
  event: MessageShape<typeof EntitlementChangedSchema>,
  id: string,
) {
  const vip = t.platform.contexts.get("vip") as VipContext;
  const meta = { id, subject: entitlementsConsumer.subject };
  return vip.transaction((em) => entitlementsConsumer.handle(event, em, meta, vip));
}

/** Reads until `done` holds of what was read (the kit's `until`), and answers the last value read. */
export async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  let value!: T;
  await holds(async () => done((value = await read())), timeoutMs).catch(() => {
    throw new Error(`timed out; last: ${JSON.stringify(value)}`);
  });
  return value;
}
