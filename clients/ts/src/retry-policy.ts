/** How a client tries a call again. */
export interface RetryPolicy {
  /** Tries in all, the first included (1: never again). */
  attempts: number;
  /** The ceiling of the first wait without Retry-After; each next one doubles (the wait itself is random below it). */
  backoffMs: number;
  /** The longest wait: a Retry-After beyond it is not waited for, the refusal is answered at once. */
  maxWaitMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { attempts: 3, backoffMs: 250, maxWaitMs: 10_000 };

/** A policy from the caller's option: `false` never tries again, unset members keep their defaults. */
export function retryPolicyOf(option: Partial<RetryPolicy> | false | undefined): RetryPolicy {
  return option === false ? { ...DEFAULT_RETRY_POLICY, attempts: 1 } : { ...DEFAULT_RETRY_POLICY, ...option };
}

/**
 * Whether a call may be sent again after a failure: an idempotent one (a read) does nothing more the second time,
 * and a write carrying an idempotency key is answered once however often it arrives; any other write might be
 * done twice.
 */
export function repeatable(call: { idempotent: boolean; idempotencyKey: boolean }): boolean {
  return call.idempotent || call.idempotencyKey;
}

/**
 * How long to wait before the next try of a repeatable call that failed with this HTTP status, or undefined when
 * it is not tried again:
 * - 503 (unavailable, busy) is tried again, after Retry-After when the answer gives one, else after a random wait
 *   below a ceiling that doubles each try (full jitter);
 * - 429 only with Retry-After (a rate limit's window ends then); one without it is a quota that stays spent;
 * - never past the policy's tries, nor when Retry-After is longer than its longest wait;
 * - a wait after Retry-After adds up to `backoffMs` at random, so callers told the same time do not come back at once.
 * `tried` counts the tries made so far (1 after the first); `random` answers in [0, 1).
 */
export function retryWaitMs(
  policy: RetryPolicy,
  tried: number,
  status: number,
  retryAfterSeconds: number | undefined,
  random: () => number,
): number | undefined {
  if (tried >= policy.attempts) return undefined;
  if (status !== 503 && !(status === 429 && retryAfterSeconds !== undefined)) return undefined;
  if (retryAfterSeconds !== undefined) {
    const told = retryAfterSeconds * 1000;
    return told > policy.maxWaitMs ? undefined : told + random() * policy.backoffMs;
  }
  return random() * Math.min(policy.maxWaitMs, policy.backoffMs * 2 ** (tried - 1));
}

/** Retry-After as seconds from `now`: delta-seconds or an HTTP date (RFC 9110); undefined when absent or unreadable. */
export function retryAfterSeconds(value: string | null | undefined, now: number): number | undefined {
  if (value === null || value === undefined || value.trim() === "") return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text);
  // Every HTTP date form starts with the day's name; Date.parse alone would take "-3" for a year.
  const at = /^[A-Za-z]{3}\b/.test(text) ? Date.parse(text) : Number.NaN;
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}
