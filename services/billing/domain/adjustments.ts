import type { AdjustmentLine } from "../../../gen/pf/billing/v1/admin_pb.js";
import type { Money } from "../../../gen/pf/v1/money_pb.js";
import { invalid } from "../../kit/handler/problem.js";
import { requireUser } from "../../kit/handler/subjects.js";
import { accountKey, accountKindFromProto, PLATFORM, requireBalanced, type Movement } from "./ledger.js";
import { MAX_MINOR_UNITS, requireCurrency } from "./money.js";

/**
 * The movements of a manual adjustment: at least two lines, each on a
 * subject's credit or payable (owner usr_…) or on the platform's adjustments
 * account (owner empty), each account once, signed non-zero amounts that
 * balance per currency (422 ledger.unbalanced otherwise). Other kinds (pending
 * payouts, import holds, clearing, payouts, imports) move only through their
 * own flows, so an adjustment never touches them.
 */
export function adjustmentMovements(lines: AdjustmentLine[]): Movement[] {
  if (lines.length < 2) throw invalid("lines", "An adjustment has at least two lines that balance per currency.");
  const seen = new Set<string>();
  const movements = lines.map((line, i): Movement => {
    const field = `lines[${i}]`;
    const movement = { ...lineAccount(field, line), ...signedAmount(`${field}.amount`, line.amount!) };
    const key = accountKey(movement);
    if (seen.has(key)) throw invalid(field, `${field} names an account an earlier line names: each account once.`);
    seen.add(key);
    return movement;
  });
  requireBalanced(movements);
  return movements;
}

function lineAccount(field: string, line: AdjustmentLine): Pick<Movement, "owner" | "kind"> {
  const kind = accountKindFromProto(line.kind);
  if (kind === "credit" || kind === "payable") return { owner: requireUser(`${field}.owner`, line.owner), kind };
  if (kind === "adjustments") {
    if (line.owner !== "")
      throw invalid(`${field}.owner`, `${field}.owner is empty on the platform's side (ACCOUNT_KIND_ADJUSTMENTS).`);
    return { owner: PLATFORM, kind };
  }
  throw invalid(
    `${field}.kind`,
    `${field}.kind is ACCOUNT_KIND_CREDIT or ACCOUNT_KIND_PAYABLE (a subject's) or ACCOUNT_KIND_ADJUSTMENTS (the platform's).`,
  );
}

/** A signed, non-zero amount (required: declared): adjustments take money off a balance as well as add it. */
function signedAmount(field: string, money: Money): Pick<Movement, "currency" | "amount"> {
  const currency = requireCurrency(`${field}.currency`, money.currency);
  const amount = money.minorUnits;
  if (amount === 0n || amount > MAX_MINOR_UNITS || amount < -MAX_MINOR_UNITS) {
    throw invalid(
      `${field}.minor_units`,
      `${field}.minor_units is a non-zero whole number between -${MAX_MINOR_UNITS} and ${MAX_MINOR_UNITS}.`,
    );
  }
  return { currency, amount };
}
