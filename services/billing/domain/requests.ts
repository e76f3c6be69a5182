import { invalid } from "../../kit/handler/problem.js";

/**
 * Ledger admin changes say why (adjustments, import holds, freeze and thaw): required here, where a release may
 * leave it out (at most 500 characters on every route: declared).
 */
export function requireReason(reason: string): string {
  if (reason.trim() === "") throw invalid("reason", "reason is required: say why.");
  return reason;
}
