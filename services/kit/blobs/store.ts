import type { Readable } from "node:stream";

/** An inclusive byte range of a blob, as HTTP Range writes it. */
export interface ByteRange {
  readonly start: number;
  readonly end: number;
}

/**
 * Bytes kept outside the database (media objects, deploys, tool files), behind
 * one interface (ARCHITECTURE.md "Running"): a directory under the data dir by
 * default, or an S3-compatible bucket. A put stores the whole body or nothing:
 * a body that fails part way (a cap, a client gone, the store gone) leaves no
 * object under its key.
 */
export interface BlobStore {
  /** `fs` or `s3`, for logs and tests. */
  readonly kind: string;
  /** Stores every byte of `body` under `key`, or nothing; the body's own error is rethrown as it is. */
  put(key: string, body: AsyncIterable<Uint8Array>, contentType: string): Promise<void>;
  /** The bytes under `key`, or of a range of them; `BlobMissingError` when none are. */
  get(key: string, range?: ByteRange): Promise<Readable>;
  /** Whether an object is stored under `key`. */
  has(key: string): Promise<boolean>;
  /** Removes the object under `key`, if any. */
  delete(key: string): Promise<void>;
  /**
   * Removes what puts cut off by a crash left (they never finished nor cleaned up) and last wrote before `olderThan`:
   * the whole store's, whatever prefix it is seen under. A put under way writes as its body arrives, so an age past
   * the longest pause of a live upload spares it.
   */
  sweepUnfinished(olderThan: Date): Promise<void>;
  /** The same store under `<prefix>/`: each service gets its own (the host scopes it by the service key). */
  scoped(prefix: string): BlobStore;
}

/** No object under the key. */
export class BlobMissingError extends Error {
  constructor(key: string) {
    super(`no blob ${key}`);
    this.name = "BlobMissingError";
  }
}

/** The store did not answer or failed (a bucket unreachable, a disk full): the object was not stored or read. */
export class BlobUnavailableError extends Error {
  constructor(what: string, cause: unknown) {
    super(`the blob store failed to ${what}: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = "BlobUnavailableError";
  }
}

const SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/;

/**
 * A key is `/`-separated segments of letters, digits, `.`, `_` and `-`, none
 * starting with a dot: nothing can step out of the store's directory or prefix.
 */
export function checkedKey(key: string): string {
  if (key.length > 512 || !key.split("/").every((segment) => SEGMENT.test(segment)))
    throw new Error(`not a blob key: ${JSON.stringify(key)}`);
  return key;
}

/** A store seen under a prefix, by a wrapper any store shares; a prefix that is not a key is refused at once. */
export function prefixed(store: BlobStore, prefix: string): BlobStore {
  checkedKey(prefix);
  const under = (key: string) => `${prefix}/${checkedKey(key)}`;
  return {
    kind: store.kind,
    put: async (key, body, contentType) => store.put(under(key), body, contentType),
    get: async (key, range) => store.get(under(key), range),
    has: async (key) => store.has(under(key)),
    delete: async (key) => store.delete(under(key)),
    sweepUnfinished: async (olderThan) => store.sweepUnfinished(olderThan),
    scoped: (inner) => prefixed(store, `${prefix}/${inner}`),
  };
}

/**
 * The response header a byte answer's RPC sets to the length of the bytes it
 * will stream; the gateway answers it as Content-Length (gateway/bytes.ts).
 */
export const CONTENT_LENGTH_HEADER = "pf-content-length";
