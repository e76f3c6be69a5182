import { createHash, randomInt } from "node:crypto";

/** An ingest key's status: `active`, `grace` (revoked at a moment still to come), `revoked`. */
export type KeyStatus = "active" | "grace" | "revoked";

const KEY_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const KEY_LENGTH = 40;

/** A new ingest key: 40 random letters and digits (about 238 bits), safe in an RTMP path as it is. */
export function newIngestKey(): string {
  let key = "";
  for (let i = 0; i < KEY_LENGTH; i++) key += KEY_ALPHABET[randomInt(KEY_ALPHABET.length)];
  return key;
}

/** What is stored of a key and what a worker asks with: its SHA-256, lowercase hex. */
export function keyHashOf(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

/** What reads show of a key: its last four characters. */
export function keyHintOf(key: string): string {
  return key.slice(-4);
}

/** A key's status at `now`, from when it is (or was) revoked. */
export function keyStatusAt(revokedAt: Date | null | undefined, now: Date): KeyStatus {
  if (!revokedAt) return "active";
  return revokedAt.getTime() > now.getTime() ? "grace" : "revoked";
}

/** When a rotated key stops working: now, or after its grace. */
export function revokedAfterGrace(now: Date, graceSeconds: number): Date {
  return new Date(now.getTime() + graceSeconds * 1000);
}
