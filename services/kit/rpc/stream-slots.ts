import { problem } from "../handler/problem.js";

/** One cap on open streams: at most `limit` at once for `key` under the rule `name`. */
export interface SlotRule {
  /** The rule's name, e.g. `tips.stream.token`; a refusal names it. */
  name: string;
  /** What it counts by: a token id, a client key. "" counts nothing (a caller that did not come through the gateway has no address). */
  key: string;
  limit: number;
}

/**
 * What a refused client is told to wait: a slot frees when one of the
 * streams holding it closes, at a time nobody knows in advance.
 */
export const STREAM_RETRY_AFTER_SECONDS = 10;

/**
 * Concurrent open streams, counted per rule and key in this process (each
 * instance counts its own: behind N instances a client may hold up to N times
 * a limit, which bounds what one instance's memory holds, the point of it).
 * A stream takes its slots before its first message and releases them when it
 * ends, however it ends (its `finally`: the client gone, a revocation, the
 * server closing).
 */
export class StreamSlots {
  private readonly open = new Map<string, number>();

  /**
   * Takes one slot under every rule, or none: a full rule is 429
   * `rate.limited` (members `rule`, `retry_after_seconds`, the kit's 429
   * shape). Answers the release, which frees them once however often called.
   */
  take(rules: SlotRule[]): () => void {
    const counted = rules
      .filter((rule) => rule.key !== "")
      .map((rule) => ({ rule, slot: `${rule.name}\n${rule.key}` }));
    const full = counted.find(({ rule, slot }) => (this.open.get(slot) ?? 0) >= rule.limit)?.rule;
    if (full) {
      throw problem(
        429,
        "rate.limited",
        `Too many open streams (${full.name}: at most ${full.limit} at once); close one and try again.`,
        { rule: full.name, retry_after_seconds: STREAM_RETRY_AFTER_SECONDS },
      );
    }
    for (const { slot } of counted) this.open.set(slot, (this.open.get(slot) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const { slot } of counted) {
        const left = (this.open.get(slot) ?? 1) - 1;
        if (left === 0) this.open.delete(slot);
        else this.open.set(slot, left);
      }
    };
  }
}
