import { randomBytes } from "node:crypto";

// Crockford base32, as ULID uses: ids sort by creation time as plain strings.
const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

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
