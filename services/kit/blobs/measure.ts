import { createHash } from "node:crypto";

/** A body that went past its cap: what reads it stops there, and whatever it was written to is discarded. */
export class TooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`the body is larger than ${limit} bytes`);
    this.name = "TooLargeError";
  }
}

/** What a body turned out to be once read to its end. */
export interface Measured {
  size: number;
  /** Lowercase hex SHA-256 of every byte. */
  sha256: string;
}

/**
 * A body counted and hashed chunk by chunk, for a reader that already walks
 * its chunks (one pass instead of a generator layer more per chunk).
 */
export class Measure {
  private readonly hash = createHash("sha256");
  /** Bytes counted so far. */
  size = 0;

  constructor(readonly limit: number) {}

  /** Counts and hashes `chunk`; `TooLargeError` when it takes the body past the limit. */
  add(chunk: Uint8Array): void {
    this.size += chunk.byteLength;
    if (this.size > this.limit) throw new TooLargeError(this.limit);
    this.hash.update(chunk);
  }

  /** What the body turned out to be, once every chunk was added (once: the digest ends the hash). */
  result(): Measured {
    return { size: this.size, sha256: this.hash.digest("hex") };
  }
}

/**
 * Passes `body` through, counting and hashing it on the way; throws
 * `TooLargeError` as soon as it passes `limit` bytes (before handing on the
 * chunk that did), and fills `into` when it ends.
 */
export async function* measured(
  body: AsyncIterable<Uint8Array>,
  limit: number,
  into: Measured,
): AsyncGenerator<Uint8Array, void> {
  const measure = new Measure(limit);
  for await (const chunk of body) {
    measure.add(chunk);
    yield chunk;
  }
  Object.assign(into, measure.result());
}
