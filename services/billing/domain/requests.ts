import type { HandlerContext } from "@connectrpc/connect";
import { idempotencyKeyOf } from "../../kit/idempotency.js";
import { invalid } from "../../kit/problem.js";

/**
 * Every write that moves money needs an idempotency key (the body's
 * idempotency_key or the Idempotency-Key header), so a retry never moves it twice.
 */
export function requireIdempotencyKey(bodyKey: string, call: HandlerContext): string {
  const key = idempotencyKeyOf(bodyKey, call);
  if (key === "") throw invalid("idempotency_key", "Writes that move money need an idempotency_key (or an Idempotency-Key header).");
  return key;
}
