import type { HandlerContext } from "@connectrpc/connect";
import { idempotencyKeyOf } from "../../kit/handler/idempotency.js";
import { maxLength } from "../../kit/handler/text.js";
import { invalid } from "../../kit/handler/problem.js";

/**
 * Every write that moves money needs an idempotency key (the body's
 * idempotency_key or the Idempotency-Key header), so a retry never moves it twice.
 */
export function requireIdempotencyKey(bodyKey: string, call: HandlerContext): string {
  const key = idempotencyKeyOf(bodyKey, call);
  if (key === "") throw invalid("idempotency_key", "Writes that move money need an idempotency_key (or an Idempotency-Key header).");
  return key;
}

/** Ledger admin changes say why (adjustments, import holds, freeze and thaw): required, at most 500 characters. */
export function requireReason(reason: string): string {
  if (reason.trim() === "") throw invalid("reason", "reason is required: say why.");
  return maxLength("reason", reason, 500);
}
