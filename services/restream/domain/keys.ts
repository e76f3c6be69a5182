/** An ingest key's status: `active`, `grace` (revoked at a moment still to come), `revoked`. */
export type KeyStatus = "active" | "grace" | "revoked";

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
