import { describe, expect, it } from "vitest";
import { ApprovalVerdict } from "../../gen/pf/v1/authorship_pb.js";
import {
  type AiRule,
  approvalToProto,
  approverOf,
  authorColumns,
  authorFromColumns,
  authorOf,
  authorshipToProto,
} from "../../services/kit/auth/authorship.js";
import { problemOf } from "../../services/kit/handler/problem.js";
import { asService, asServiceFor, asUser, callAs } from "../support/callers.js";

/** The authorship model of analysis K5, as every service reusing it sees it. */
const RULE: AiRule = { workflow: "trade.summarize_market_context", code: "context.workflow_required" };
const RUN = { workflow: RULE.workflow, runId: "run_01" };
const NONE = { workflow: "", runId: "" };
const ai = (subject?: string) => (subject ? asServiceFor(subject, { origin: "ai" }) : asService({ origin: "ai" }));

const codeOf = (work: () => unknown) => {
  try {
    work();
    return "answered";
  } catch (error) {
    return problemOf(error).code;
  }
};

describe("authorship", () => {
  it("origin ai is always AI authorship, with workflow, run and stub flag", () => {
    expect(authorOf(ai(), { ...RUN, stubProvider: true }, RULE)).toEqual({
      kind: "ai",
      workflow: RULE.workflow,
      runId: "run_01",
      stubProvider: true,
      service: "svc:web",
    });
  });

  it("a person named beside origin ai is kept only as requested_by, never the author", () => {
    const author = authorOf(ai("usr_alice"), RUN, RULE);
    expect(author).toMatchObject({ kind: "ai", requestedBy: "usr_alice" });
    expect(authorshipToProto(author).author).toEqual({
      case: "ai",
      value: expect.objectContaining({ workflow: RULE.workflow, runId: "run_01", service: "svc:web" }),
    });
    expect(JSON.stringify(authorshipToProto(author))).not.toContain("usr_alice");
  });

  it("origin ai needs exactly the rule's workflow and a run id", () => {
    for (const claim of [
      NONE,
      { workflow: RULE.workflow, runId: "" },
      { workflow: "trade.summarize_market_context ", runId: "run_01" },
      { workflow: "Trade.Summarize_Market_Context", runId: "run_01" },
      { workflow: "news.summarize", runId: "run_01" },
      { workflow: RULE.workflow, runId: "run 01" },
      { workflow: RULE.workflow, runId: "r".repeat(129) },
    ]) {
      expect(codeOf(() => authorOf(ai("usr_alice"), claim, RULE))).toBe("context.workflow_required");
    }
  });

  it("a person or a service acting as itself authors as itself, and cannot claim a workflow", () => {
    expect(authorOf(asUser("usr_bob"), NONE, RULE)).toEqual({ kind: "person", person: "usr_bob" });
    expect(authorOf(asServiceFor("usr_bob"), NONE, RULE)).toEqual({ kind: "person", person: "usr_bob" });
    expect(authorOf(asService(), NONE, RULE)).toEqual({ kind: "system", service: "svc:web" });
    expect(codeOf(() => authorOf(asUser("usr_bob"), RUN, RULE))).toBe("request.invalid");
    expect(codeOf(() => authorOf(asService(), { workflow: "", runId: "run_01" }, RULE))).toBe("request.invalid");
    expect(codeOf(() => authorOf(asUser("usr_bob"), { ...NONE, stubProvider: true }, RULE))).toBe("request.invalid");
  });

  it("round-trips through the columns a service stores", () => {
    for (const author of [
      authorOf(ai("usr_alice"), { ...RUN, stubProvider: true }, RULE),
      authorOf(ai(), RUN, RULE),
      authorOf(asUser("usr_bob"), NONE, RULE),
      authorOf(asService(), NONE, RULE),
    ]) {
      expect(authorFromColumns(authorColumns(author))).toEqual(author);
    }
  });

  it("fills every column, the parts a person or a service lacks null, so a row needs nothing more", () => {
    expect(authorColumns({ kind: "person", person: "usr_bob" })).toEqual({
      authorKind: "person",
      author: "usr_bob",
      workflow: null,
      runId: null,
      stubProvider: false,
      requestedBy: null,
    });
    expect(authorColumns({ kind: "system", service: "svc_feeds" })).toMatchObject({
      workflow: null,
      requestedBy: null,
    });
  });
});

describe("approval", () => {
  it("only a person (usr_, no origin ai) approves", () => {
    expect(approverOf(asUser("usr_carol"))).toBe("usr_carol");
    expect(approverOf(asServiceFor("usr_carol"))).toBe("usr_carol");
    expect(codeOf(() => approverOf(ai("usr_carol")))).toBe("auth.person_required");
    expect(codeOf(() => approverOf(ai()))).toBe("auth.person_required");
    expect(codeOf(() => approverOf(asService()))).toBe("auth.person_required");
    expect(codeOf(() => approverOf(callAs({ kind: "app", sub: "app:web", fp: true })))).toBe("auth.person_required");
    expect(codeOf(() => approverOf(asUser("gst_dave")))).toBe("auth.member_required");
  });

  it("records who and when", () => {
    const at = new Date("2026-12-03T10:00:00Z");
    const approval = approvalToProto({ approver: "usr_carol", at, approved: true });
    expect(approval).toMatchObject({ approver: "usr_carol", verdict: ApprovalVerdict.APPROVED, note: "" });
    expect(Number(approval.at?.seconds) * 1000).toBe(at.getTime());
    expect(approvalToProto({ approver: "usr_carol", at, approved: false, note: "no" }).verdict).toBe(
      ApprovalVerdict.REJECTED,
    );
  });
});
