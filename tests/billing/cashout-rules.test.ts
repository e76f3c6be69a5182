import { describe, expect, it } from "vitest";
import { decide, escrowUntil, requireMinimum, type Decidable } from "../../services/billing/domain/cashouts.js";
import { problemOf } from "../../services/kit/handler/problem.js";

const problemFrom = (work: () => unknown) => {
  try {
    work();
  } catch (error) {
    return problemOf(error);
  }
  throw new Error("expected a problem");
};

const at = new Date("2026-03-01T00:00:00Z");
const requested: Decidable = {
  status: "requested",
  escrowUntil: escrowUntil(at, 3_600_000),
  payoutReference: "",
  reason: "",
};
const approve = (payoutReference: string) => ({ action: "approve", payoutReference }) as const;
const deny = (reason: string) => ({ action: "deny", reason }) as const;

describe("cashout rules", () => {
  it("takes at least the minimum, naming it", () => {
    expect(() => requireMinimum(1000n, "USD", 1000n)).not.toThrow();
    const refused = problemFrom(() => requireMinimum(999n, "USD", 1000n));
    expect(refused).toMatchObject({ status: 422, code: "cashout.below_minimum" });
    expect(refused.extensions).toEqual({ minimum: "1000", currency: "USD" });
  });

  it("ends the escrow escrowMs after the request", () => {
    expect(escrowUntil(at, 7 * 86_400_000)).toEqual(new Date("2026-03-08T00:00:00Z"));
  });

  it("approves only from escrow_until on; denies at any time while requested", () => {
    const early = problemFrom(() => decide(requested, approve("po_1"), new Date(at.getTime() + 3_599_999)));
    expect(early).toMatchObject({ status: 409, code: "cashout.in_escrow" });
    expect(early.extensions).toEqual({ escrow_until: "2026-03-01T01:00:00Z" });
    expect(decide(requested, approve("po_1"), requested.escrowUntil)).toBe("apply");
    expect(decide(requested, deny(""), at)).toBe("apply");
  });

  it("repeats the same decision and refuses any other once decided", () => {
    const approved = { ...requested, status: "approved", payoutReference: "po_1" };
    const denied = { ...requested, status: "denied", reason: "no" };
    const later = new Date(at.getTime() + 86_400_000);
    expect(decide(approved, approve("po_1"), later)).toBe("repeat");
    expect(decide(denied, deny("no"), later)).toBe("repeat");
    for (const [cashout, decision] of [
      [approved, approve("po_2")],
      [approved, deny("no")],
      [denied, deny("other")],
      [denied, approve("po_1")],
    ] as const) {
      expect(problemFrom(() => decide(cashout, decision, later))).toMatchObject({
        status: 409,
        code: "cashout.decided",
      });
    }
  });
});
