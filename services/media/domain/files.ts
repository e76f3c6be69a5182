import { invalid } from "../../kit/handler/problem.js";

/**
 * A key: 24 base64url characters, 144 random bits; never derived from the content (a digest is guessable).
 * The contract holds the keys reads name to this shape (media.proto, FileReadRequest.key).
 */
export const KEY_PATTERN = /^[A-Za-z0-9_-]{24}$/;

/** The key of a new object from 18 random bytes. */
export function keyFrom(random: Uint8Array): string {
  if (random.length !== 18) throw new Error("a key takes 18 random bytes");
  return Buffer.from(random).toString("base64url");
}

/**
 * A file's name as uploaded, stored as sent. The contract holds it to 255
 * characters and never a path (no separators or control characters, not `.`
 * or `..`), but cannot require one: only an upload's first message names the
 * file, so an empty name is refused here (400 naming `name`).
 */
export function checkedName(name: string): string {
  if (name === "") throw invalid("name", "Field name is empty: the file part needs a filename.");
  return name;
}

/**
 * A media type (the contract holds it to `type/subtype` and parameters), its
 * essence lowercased and parameters trimmed; empty is application/octet-stream.
 */
export function checkedContentType(type: string): string {
  const trimmed = type.trim();
  if (trimmed === "") return "application/octet-stream";
  const [essence, ...parameters] = trimmed.split(";");
  return [essence.toLowerCase(), ...parameters.map((each) => each.trim())].join("; ");
}
