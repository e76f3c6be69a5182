import type { ImportHoldSpec } from "../../../gen/pf/billing/v1/admin_pb.js";
import { invalid } from "../../kit/handler/problem.js";
import { requireUser } from "../../kit/handler/subjects.js";
import { accountKindFromProto, PLATFORM, type Movement } from "./ledger.js";
import { requireAmount } from "./money.js";

/** An imported balance: whose, where its release puts it, how much. */
export interface ImportedBalance {
  subject: string;
  releaseTo: "credit" | "payable";
  currency: string;
  amount: bigint;
}

/** A valid import hold request (the import_hold of an adjustment). */
export function requireImportHold(spec: ImportHoldSpec): ImportedBalance & { sourceRef: string } {
  const subject = requireUser("import_hold.subject", spec.subject);
  const releaseTo = accountKindFromProto(spec.releaseTo);
  if (releaseTo !== "credit" && releaseTo !== "payable") {
    throw invalid("import_hold.release_to", "import_hold.release_to is ACCOUNT_KIND_CREDIT or ACCOUNT_KIND_PAYABLE.");
  }
  const { currency, amount } = requireAmount("import_hold.amount", spec.amount);
  return { subject, releaseTo, currency, amount, sourceRef: spec.sourceRef }; // source_ref: 200 characters, declared
}

/** Holding: the money enters from the platform's imports account onto the subject's import hold, where nothing can spend it. */
export function holdMovements(hold: ImportedBalance): Movement[] {
  return [
    { owner: PLATFORM, kind: "imports", currency: hold.currency, amount: -hold.amount },
    { owner: hold.subject, kind: "import_hold", currency: hold.currency, amount: hold.amount },
  ];
}

/** Releasing: the held amount moves into the balance it was imported for. */
export function releaseMovements(hold: ImportedBalance): Movement[] {
  return [
    { owner: hold.subject, kind: "import_hold", currency: hold.currency, amount: -hold.amount },
    { owner: hold.subject, kind: hold.releaseTo, currency: hold.currency, amount: hold.amount },
  ];
}
