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
 * Passes `body` through, counting and hashing it on the way; throws
 * `TooLargeError` as soon as it passes `limit` bytes (before handing on the
 * chunk that did), and fills `into` when it ends.
 */
export async function* measured(
  body: AsyncIterable<Uint8Array>,
  limit: number,
  into: Measured,
): AsyncGenerator<Uint8Array, void> {
  const hash = createHash("sha256");
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > limit) throw new TooLargeError(limit);
    hash.update(chunk);
    yield chunk;
  }
  into.size = size;
  into.sha256 = hash.digest("hex");
}
