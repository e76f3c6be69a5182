import { createHash } from "node:crypto";

/**
 * The cache key of a call: the sha256 (hex) of a canonical JSON of everything its answer depends on. The namespace
 * is part of it, so no answer crosses namespaces; the definitions (the workflow's, prompt's and route's versions)
 * too, so a new version never meets an old answer.
 */
export function cacheKeyOf(parts: {
  namespace: string;
  operation: string;
  provider: string;
  model: string;
  definitions: string;
  request: unknown;
}): string {
  return createHash("sha256")
    .update(JSON.stringify(canonical(parts)))
    .digest("hex");
}

/** A value with its objects' keys sorted and undefined members left out: equal values give equal text. */
export function canonical(value: unknown): unknown {
  if (typeof value === "bigint") return value.toString();
  if (value === null || typeof value !== "object") return value;
  if (value instanceof Uint8Array) return Buffer.from(value).toString("base64");
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map((item) => (item === undefined ? null : canonical(item)));
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, member]) => member !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries.map(([key, member]) => [key, canonical(member)]));
}
