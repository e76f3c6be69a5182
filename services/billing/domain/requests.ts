import { invalid } from "../../kit/handler/problem.js";
import { maxLength } from "../../kit/handler/text.js";

/** Ledger admin changes say why (adjustments, import holds, freeze and thaw): required, at most 500 characters. */
export function requireReason(reason: string): string {
  if (reason.trim() === "") throw invalid("reason", "reason is required: say why.");
  return maxLength("reason", reason, 500);
}
