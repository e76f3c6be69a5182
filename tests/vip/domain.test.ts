import { describe, expect, it } from "vitest";
import { EntitlementStatus } from "../../gen/pf/vip/v1/memberships_pb.js";
import { EvaluateReason } from "../../gen/pf/vip/v1/policies_pb.js";
import { VersionState } from "../../gen/pf/vip/v1/plans_pb.js";
import { answerOf, factFromBilling, isStale, type Fact } from "../../services/vip/domain/entitlements.js";
import { membershipsOf, NO_PREFERENCES } from "../../services/vip/domain/memberships.js";
import { evaluate } from "../../services/vip/domain/policies.js";
import { termsFrom, versionState } from "../../services/vip/domain/plans.js";

const at = (iso: string) => new Date(iso);
const HOUR = 3_600_000;
const fact = (over: Partial<Fact> = {}): Fact => ({
  subscriptionId: "sub_1",
  planId: "pln_1",
  planVersion: 1,
  status: "active",
  validUntil: at("2026-01-10T00:00:00Z"),
  observedAt: at("2026-01-01T00:00:00Z"),
  refreshedAt: at("2026-01-01T00:00:00Z"),
  ...over,
});

describe("the entitlement answer", () => {
  it("is member before valid_until, in grace after it, unknown past valid_until plus grace", () => {
    expect(answerOf(fact(), at("2026-01-09T00:00:00Z"), 24 * HOUR)).toMatchObject({
      status: EntitlementStatus.MEMBER,
      member: true,
    });
    expect(answerOf(fact(), at("2026-01-10T12:00:00Z"), 24 * HOUR)).toMatchObject({
      status: EntitlementStatus.IN_GRACE,
      member: true,
    });
    expect(answerOf(fact(), at("2026-01-11T00:00:00Z"), 24 * HOUR)).toMatchObject({
      status: EntitlementStatus.UNKNOWN,
      member: false,
    });
    expect(answerOf(fact(), at("2026-01-11T00:00:00Z"), 24 * HOUR).graceUntil).toEqual(at("2026-01-11T00:00:00Z"));
  });

  it("is not member without a fact, and not member in grace once billing ended it", () => {
    expect(answerOf(undefined, at("2026-01-01T00:00:00Z"), HOUR)).toMatchObject({
      status: EntitlementStatus.NOT_MEMBER,
      member: false,
    });
    expect(answerOf(fact({ status: "ended" }), at("2026-01-10T00:30:00Z"), HOUR)).toMatchObject({
      status: EntitlementStatus.NOT_MEMBER,
      member: false,
    });
    expect(answerOf(fact({ status: "ended" }), at("2026-01-10T02:00:00Z"), HOUR).status).toBe(
      EntitlementStatus.UNKNOWN,
    );
  });

  it("is unknown without a fact when billing did not answer: billing may hold what the projection has not heard of", () => {
    expect(answerOf(undefined, at("2026-01-01T00:00:00Z"), HOUR, true)).toEqual({
      status: EntitlementStatus.UNKNOWN,
      member: false,
    });
    expect(answerOf(fact(), at("2026-01-09T00:00:00Z"), HOUR, true)).toMatchObject({
      status: EntitlementStatus.MEMBER,
      member: true,
    });
  });

  it("is stale past the TTL, or when there is no fact", () => {
    expect(isStale(fact(), at("2026-01-01T00:01:00Z"), 60_000)).toBe(false);
    expect(isStale(fact(), at("2026-01-01T00:01:01Z"), 60_000)).toBe(true);
    expect(isStale(undefined, at("2026-01-01T00:00:00Z"), 60_000)).toBe(true);
  });

  it("merges billing's answer: a current entitlement, an early end, a lapse that keeps its end", () => {
    const now = at("2026-01-05T00:00:00Z");
    const current = {
      subscriptionId: "sub_2",
      planId: "pln_2",
      planVersion: 3,
      validUntil: at("2026-02-01T00:00:00Z"),
    };
    expect(factFromBilling(fact(), current, now)).toMatchObject({
      ...current,
      status: "active",
      observedAt: now,
      refreshedAt: now,
    });
    expect(factFromBilling(fact(), undefined, now)).toMatchObject({ status: "ended", validUntil: now });
    const later = at("2026-01-10T06:00:00Z");
    expect(factFromBilling(fact(), undefined, later)).toMatchObject({
      status: "none",
      validUntil: at("2026-01-10T00:00:00Z"),
      refreshedAt: later,
    });
    expect(factFromBilling(undefined, undefined, now)).toMatchObject({ status: "none", validUntil: null });
  });
});

describe("policy evaluation", () => {
  const member = { status: EntitlementStatus.MEMBER, member: true };
  const policy = (rule: "any_member" | "plan_member" | "perk_holder") => ({
    creator: "usr_c",
    rule,
    planId: "pln_a",
    perkId: "prk_a",
  });
  it("admits the creator, members by rule, and never an unknown entitlement", () => {
    expect(
      evaluate(policy("any_member"), "usr_c", { status: EntitlementStatus.UNKNOWN, member: false }, undefined),
    ).toEqual({ allowed: true, reason: EvaluateReason.OWNER });
    expect(evaluate(policy("any_member"), "usr_f", member, { planId: "pln_b", perkIds: [] })).toEqual({
      allowed: true,
      reason: EvaluateReason.MEMBER,
    });
    expect(
      evaluate(policy("any_member"), "usr_f", { status: EntitlementStatus.UNKNOWN, member: false }, undefined).reason,
    ).toBe(EvaluateReason.UNKNOWN);
    expect(
      evaluate(policy("any_member"), "usr_f", { status: EntitlementStatus.NOT_MEMBER, member: false }, undefined)
        .reason,
    ).toBe(EvaluateReason.NOT_MEMBER);
    expect(evaluate(policy("plan_member"), "usr_f", member, { planId: "pln_b", perkIds: [] })).toEqual({
      allowed: false,
      reason: EvaluateReason.PLAN_MISMATCH,
    });
    expect(evaluate(policy("plan_member"), "usr_f", member, { planId: "pln_a", perkIds: [] }).allowed).toBe(true);
    expect(evaluate(policy("perk_holder"), "usr_f", member, { planId: "pln_b", perkIds: ["prk_b"] })).toEqual({
      allowed: false,
      reason: EvaluateReason.PERK_MISSING,
    });
    expect(evaluate(policy("perk_holder"), "usr_f", member, { planId: "pln_b", perkIds: ["prk_a"] }).allowed).toBe(
      true,
    );
  });
});

describe("a subject's memberships", () => {
  const now = at("2026-01-05T00:00:00Z");
  const checkout = (id: string, creator: string, planId: string, planVersion = 1, announce = true) => ({
    id,
    creator,
    planId,
    planVersion,
    preferences: { announce, notifications: true },
  });
  const facts = (entries: [string, Fact][]) => new Map(entries);

  it("is the checkout billing's entitlement names, one per channel, never billing's subscription again", () => {
    const older = checkout("mbr_1", "usr_a", "pln_1");
    const chosen = membershipsOf(
      [checkout("mbr_2", "usr_a", "pln_1", 2), older],
      facts([["usr_a", fact()]]),
      now,
      HOUR,
    );
    expect(chosen).toEqual([{ origin: "checkout", creator: "usr_a", checkout: older, fact: fact() }]);
  });

  it("is billing's subscription when no checkout names it: made at billing (no preferences stated: both off) or its plan changed there (the channel's latest checkout's)", () => {
    const direct = fact({ subscriptionId: "sub_9", planId: "pln_9" });
    expect(membershipsOf([], facts([["network", direct]]), now, HOUR)).toEqual([
      { origin: "billing", creator: "network", fact: direct, preferences: NO_PREFERENCES },
    ]);
    const changed = fact({ planId: "pln_2" });
    const latest = checkout("mbr_2", "usr_a", "pln_1", 1, false);
    expect(
      membershipsOf([checkout("mbr_1", "usr_a", "pln_1"), latest], facts([["usr_a", changed]]), now, HOUR),
    ).toEqual([{ origin: "billing", creator: "usr_a", fact: changed, preferences: latest.preferences }]);
    // In grace it still entitles; ended, past grace, or nothing at billing, it is no membership without a checkout.
    expect(membershipsOf([], facts([["usr_a", fact()]]), at("2026-01-10T00:30:00Z"), HOUR)).toHaveLength(1);
    for (const gone of [
      fact({ status: "ended" }),
      fact({ status: "none", validUntil: at("2026-01-01T00:00:00Z") }),
      fact({ subscriptionId: "", planId: "", status: "none", validUntil: null }),
    ]) {
      expect(membershipsOf([], facts([["usr_a", gone]]), now, HOUR)).toEqual([]);
    }
  });

  it("is the latest checkout while billing holds no entitlement for it; checkouts newest first, then billing's", () => {
    const pending = checkout("mbr_3", "usr_b", "pln_3");
    const chosen = membershipsOf(
      [checkout("mbr_1", "usr_a", "pln_1"), pending],
      facts([
        ["usr_c", fact({ subscriptionId: "sub_c", planId: "pln_c" })],
        ["usr_a", fact()],
      ]),
      now,
      HOUR,
    );
    expect(chosen.map((c) => [c.origin, c.creator])).toEqual([
      ["checkout", "usr_b"],
      ["checkout", "usr_a"],
      ["billing", "usr_c"],
    ]);
    expect(chosen[0]).toEqual({ origin: "checkout", creator: "usr_b", checkout: pending, fact: undefined });
  });
});

describe("plan versions", () => {
  it("take the base's terms with the changes sent", () => {
    const base = { name: "Gold", description: "d", tier: "tier_1", perkIds: ["prk_1"] };
    expect(termsFrom(base, { tier: "tier_2" })).toEqual({ ...base, tier: "tier_2" });
    expect(termsFrom(base, { perkIds: [] })).toEqual({ ...base, perkIds: [] });
    // The contract holds what is sent to its rules (tests/vip/rules.test.ts); the terms are trimmed, "" is tier_1.
    expect(termsFrom(base, { name: " Silver ", tier: "" })).toEqual({ ...base, name: "Silver", tier: "tier_1" });
  });

  it("stand as draft, current, superseded or discarded", () => {
    const plan = { currentVersion: 2, draftVersion: 4 };
    expect(versionState(plan, 4, false)).toBe(VersionState.DRAFT);
    expect(versionState(plan, 2, true)).toBe(VersionState.CURRENT);
    expect(versionState(plan, 1, true)).toBe(VersionState.SUPERSEDED);
    expect(versionState(plan, 3, false)).toBe(VersionState.DISCARDED);
  });
});
