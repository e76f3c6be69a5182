import { createHmac, timingSafeEqual, type BinaryLike } from "node:crypto";
import { problem } from "../../kit/handler/problem.js";

/**
 * The Standard Webhooks signature scheme (standardwebhooks.com), which
 * providers sign their deliveries with: `webhook-signature` holds
 * space-separated `v1,<base64 HMAC-SHA256(secret, id.timestamp.body)>`.
 */

/** How far a delivery's timestamp may be from billing's clock, either way (replays of old deliveries are refused). */
export const TOLERANCE_MS = 5 * 60_000;

export interface SignedHeaders {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
}

function signature(secret: BinaryLike, id: string, timestamp: string, body: Uint8Array): Buffer {
  return createHmac("sha256", secret).update(`${id}.${timestamp}.`).update(body).digest();
}

/** The headers of a delivery of `body` with message id `id`, signed at `at`. */
export function signDelivery(secret: BinaryLike, id: string, body: Uint8Array, at: Date): SignedHeaders {
  const timestamp = Math.floor(at.getTime() / 1000).toString();
  return {
    "webhook-id": id,
    "webhook-timestamp": timestamp,
    "webhook-signature": `v1,${signature(secret, id, timestamp, body).toString("base64")}`,
  };
}

/** The message id of a delivery whose signature checks out at `now`; else 401 webhook.signature_invalid. */
export function verifyDelivery(secret: BinaryLike, headers: Headers, body: Uint8Array, now: Date): string {
  const refuse = (detail: string) => problem(401, "webhook.signature_invalid", detail);
  const id = headers.get("webhook-id");
  const timestamp = headers.get("webhook-timestamp");
  const signatures = headers.get("webhook-signature");
  if (!id || !timestamp || !signatures)
    throw refuse("The delivery lacks its webhook-id, webhook-timestamp or webhook-signature header.");
  if (!/^\d{1,12}$/.test(timestamp) || Math.abs(Number(timestamp) * 1000 - now.getTime()) > TOLERANCE_MS) {
    throw refuse("The delivery's webhook-timestamp is not within five minutes of now.");
  }
  const expected = signature(secret, id, timestamp, body);
  const matches = signatures.split(" ").some((each) => {
    const [version, value] = each.split(",", 2);
    if (version !== "v1" || value === undefined) return false;
    const given = Buffer.from(value, "base64");
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) throw refuse("The delivery's webhook-signature does not match its body.");
  return id;
}
