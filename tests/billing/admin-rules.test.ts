import { create, fromJson } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import {
  AdjustmentLineSchema,
  BillingAdminService,
  ImbalanceKind,
  ImportHoldSpecSchema,
} from "../../gen/pf/billing/v1/admin_pb.js";
import { AccountKind } from "../../gen/pf/billing/v1/ledger_pb.js";
import { ProblemSchema } from "../../gen/pf/v1/problem_pb.js";
import { adjustmentMovements } from "../../services/billing/domain/adjustments.js";
import { holdMovements, releaseMovements, requireImportHold } from "../../services/billing/domain/import-holds.js";
import { PLATFORM, requireBalanced } from "../../services/billing/domain/ledger.js";
import { reconciliationReport, type Finding } from "../../services/billing/domain/reconciliation.js";
import { requireReason } from "../../services/billing/domain/requests.js";
import { inputFaults } from "../../services/kit/rpc/input.js";

const usd = (minorUnits: bigint, currency = "USD") => ({ minorUnits, currency });
const line = (owner: string, kind: AccountKind, amount: bigint, currency = "USD") =>
  create(AdjustmentLineSchema, { owner, kind, amount: usd(amount, currency) });

/** The problem a rule throws: its code and the field it names. */
function refusal(rule: () => unknown) {
  try {
    rule();
  } catch (error) {
    const [problem] = (error as ConnectError).findDetails(ProblemSchema);
    return { code: problem.code, field: problem.extensions?.field };
  }
  throw new Error("the rule accepted it");
}

describe("adjustment lines", () => {
  it("become movements: subjects' credit and payable, the platform's adjustments account for an empty owner", () => {
    expect(
      adjustmentMovements([
        line("usr_a1", AccountKind.CREDIT, 5n),
        line("usr_b1", AccountKind.PAYABLE, -2n),
        line("", AccountKind.ADJUSTMENTS, -3n),
      ]),
    ).toEqual([
      { owner: "usr_a1", kind: "credit", currency: "USD", amount: 5n },
      { owner: "usr_b1", kind: "payable", currency: "USD", amount: -2n },
      { owner: PLATFORM, kind: "adjustments", currency: "USD", amount: -3n },
    ]);
  });

  it("balance per currency, or 422 ledger.unbalanced", () => {
    const lines = [line("usr_a1", AccountKind.CREDIT, 5n), line("", AccountKind.ADJUSTMENTS, -5n, "EUR")];
    expect(refusal(() => adjustmentMovements(lines))).toEqual({ code: "ledger.unbalanced", field: undefined });
  });

  it("touch each account once, name a usr_ owner or none, and carry a signed non-zero amount", () => {
    const platform = line("", AccountKind.ADJUSTMENTS, -5n);
    expect(refusal(() => adjustmentMovements([platform]))).toEqual({ code: "request.invalid", field: "lines" });
    expect(
      refusal(() =>
        adjustmentMovements([line("usr_a1", AccountKind.CREDIT, 5n), platform, line("", AccountKind.ADJUSTMENTS, 0n)]),
      ),
    ).toMatchObject({
      field: "lines[2].amount.minor_units",
    });
    expect(
      refusal(() =>
        adjustmentMovements([line("usr_a1", AccountKind.CREDIT, 5n), line("usr_a1", AccountKind.CREDIT, 5n), platform]),
      ),
    ).toMatchObject({ field: "lines[1]" });
    expect(refusal(() => adjustmentMovements([line("usr_a1", AccountKind.IMPORT_HOLD, 5n), platform]))).toMatchObject({
      field: "lines[0].kind",
    });
    expect(refusal(() => adjustmentMovements([line("gst_a1", AccountKind.CREDIT, 5n), platform]))).toMatchObject({
      field: "lines[0].owner",
    });
    expect(
      refusal(() => adjustmentMovements([line("usr_a1", AccountKind.CREDIT, 2_000_000_000_000_000n), platform])),
    ).toMatchObject({
      field: "lines[0].amount.minor_units",
    });
  });
});

describe("import holds", () => {
  const spec = create(ImportHoldSpecSchema, {
    subject: "usr_a1",
    releaseTo: AccountKind.PAYABLE,
    amount: usd(70n),
    sourceRef: "legacy:9",
  });

  it("hold from the platform's imports account and release into the balance named, each posting balanced", () => {
    const hold = requireImportHold(spec);
    expect(hold).toEqual({
      subject: "usr_a1",
      releaseTo: "payable",
      currency: "USD",
      amount: 70n,
      sourceRef: "legacy:9",
    });
    expect(holdMovements(hold)).toEqual([
      { owner: PLATFORM, kind: "imports", currency: "USD", amount: -70n },
      { owner: "usr_a1", kind: "import_hold", currency: "USD", amount: 70n },
    ]);
    expect(releaseMovements(hold)).toEqual([
      { owner: "usr_a1", kind: "import_hold", currency: "USD", amount: -70n },
      { owner: "usr_a1", kind: "payable", currency: "USD", amount: 70n },
    ]);
    requireBalanced(holdMovements(hold));
    requireBalanced(releaseMovements(hold));
  });

  it("release only into credit or payable", () => {
    expect(refusal(() => requireImportHold({ ...spec, releaseTo: AccountKind.PENDING_PAYOUT }))).toMatchObject({
      field: "import_hold.release_to",
    });
  });
});

describe("a reconciliation report", () => {
  const run = { id: "rec_1", ranAt: new Date("2026-11-22T10:00:00Z"), ranBy: "svc:ops" };
  const checked = { transactions: 3n, accounts: 4n, payments: 0n };
  const finding = (check: Finding["check"], ref: string): Finding => ({
    check,
    currency: "USD",
    ref,
    expected: 0n,
    actual: 1n,
    detail: "d",
  });

  it("is balanced exactly when no check found anything", () => {
    expect(reconciliationReport(run, [], checked)).toMatchObject({
      balanced: true,
      imbalances: [],
      transactionsChecked: 3n,
      accountsChecked: 4n,
    });
    expect(reconciliationReport(run, [finding("ledger_total", "USD")], checked).balanced).toBe(false);
  });

  it("lists imbalances by kind, then by what they concern", () => {
    const report = reconciliationReport(
      run,
      [finding("escrow_mismatch", "usr_b"), finding("balance_mismatch", "usr_z"), finding("balance_mismatch", "usr_a")],
      checked,
    );
    expect(report.imbalances.map(({ kind, ref }) => [kind, ref])).toEqual([
      [ImbalanceKind.BALANCE_MISMATCH, "usr_a"],
      [ImbalanceKind.BALANCE_MISMATCH, "usr_z"],
      [ImbalanceKind.ESCROW_MISMATCH, "usr_b"],
    ]);
  });
});

describe("a ledger admin's reason", () => {
  it("is required and at most 500 characters (the length declared in the contract)", () => {
    expect(requireReason("fix")).toBe("fix");
    expect(refusal(() => requireReason(" "))).toEqual({ code: "request.invalid", field: "reason" });
    const faults = (reason: string) =>
      inputFaults(
        BillingAdminService.method.releaseImportHold,
        fromJson(BillingAdminService.method.releaseImportHold.input, { reason }),
      ).map(({ field, rule }) => `${field} ${rule}`);
    expect(faults("x".repeat(500))).toEqual([]);
    expect(faults("x".repeat(501))).toEqual(["reason string.max_len"]);
  });
});
