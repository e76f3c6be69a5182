import { createHash, randomBytes } from "node:crypto";

/**
 * A bearer secret a service shows once (an overlay token, a device credential, a stream ticket): `prefix` and 32
 * random bytes, base64url. High entropy, so one SHA-256 (no slow hash) keeps it unguessable at rest.
 */
export function newSecret(prefix = ""): string {
  return prefix + randomBytes(32).toString("base64url");
}

/** What is stored of a secret, and what a presented one is looked up by: its SHA-256, hex. */
export function secretHash(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}
