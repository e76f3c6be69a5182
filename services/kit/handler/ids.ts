import { randomBytes } from "node:crypto";

// Crockford base32, as ULID uses: ids sort by creation time as plain strings.
const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

/**
 * What follows an id's prefix and `_`: newId writes 26 characters; fixed ids
 * (tests, seeds) and subjects from tokens are any 1 to 64 lowercase letters
 * or digits.
 */
export const ID_BODY_MAX = 64;
const ID_BODY = `[0-9a-z]{1,${ID_BODY_MAX}}`;

/** The longest id a request may carry that another system made (provider, app, EntityRef ids). */
export const FOREIGN_ID_MAX = 128;

/** The ids made with one of these prefixes: `idPattern("usr", "gst")` matches `usr_…` and `gst_…`. */
export function idPattern(...prefixes: string[]): RegExp {
  const prefix = prefixes.length === 1 ? prefixes[0] : `(?:${prefixes.join("|")})`;
  return new RegExp(`^${prefix}_${ID_BODY}$`);
}

let lastMs = -1;
let lastRandom: Uint8Array = new Uint8Array(10);

/** A prefixed, time-sortable id such as `ntf_01jd…`: 48-bit ms time + 80 random bits (ULID body). */
export function newId(prefix: string, now: number = Date.now()): string {
  let random: Uint8Array;
  if (now <= lastMs) {
    // Same millisecond: increment the previous random part so ids stay monotonic.
    random = Uint8Array.from(lastRandom);
    for (let i = random.length - 1; i >= 0; i--) {
      random[i] = (random[i] + 1) & 0xff;
      if (random[i] !== 0) break;
    }
    now = lastMs;
  } else {
    random = randomBytes(10);
  }
  lastMs = now;
  lastRandom = random;
  return `${prefix}_${encodeTime(now)}${encodeRandom(random)}`;
}

function encodeTime(ms: number): string {
  let out = "";
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[ms % 32] + out;
    ms = Math.floor(ms / 32);
  }
  return out;
}

function encodeRandom(bytes: Uint8Array): string {
  let bits = 0n;
  for (const b of bytes) bits = (bits << 8n) | BigInt(b);
  let out = "";
  for (let i = 0; i < 16; i++) {
    out = ALPHABET[Number(bits & 31n)] + out;
    bits >>= 5n;
  }
  return out;
}
