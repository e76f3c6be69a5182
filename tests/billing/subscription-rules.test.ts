import { describe, expect, it } from "vitest";
import { cancellation, dueOutcome, nextValidUntil } from "../../services/billing/domain/subscriptions.js";
import { problemOf } from "../../services/kit/handler/problem.js";

const now = new Date("2026-03-01T00:00:00Z");
const state = (status: string, paidVia = "credit") => ({ status, paidVia });

describe("subscription rules", () => {
  it("cancels renewal, ends at once when asked, and refuses an ended subscription", () => {
    expect(cancellation(state("active"), false)).toBe("cancel");
    expect(cancellation(state("canceled"), false)).toBe("unchanged");
    expect(cancellation(state("active"), true)).toBe("end");
    expect(cancellation(state("canceled"), true)).toBe("end");
    try {
      cancellation(state("ended"), false);
      expect.unreachable();
    } catch (error) {
      expect(problemOf(error)).toMatchObject({ status: 409, code: "subscription.ended" });
    }
  });

  it("renews only active credit-paid subscriptions when due; canceled and intent-paid ones end", () => {
    expect(dueOutcome(state("active", "credit"))).toBe("renew");
    expect(dueOutcome(state("active", "intent"))).toBe("end");
    expect(dueOutcome(state("canceled", "credit"))).toBe("end");
  });

  it("starts the next period at the end of the last", () => {
    expect(nextValidUntil(now, 86_400_000)).toEqual(new Date("2026-03-02T00:00:00Z"));
  });
});
