// Crockford base32: no I, L, O or U, so a code read aloud or typed is not mistaken.
const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/** A pairing code from 10 random bytes: 16 characters (80 bits) in four groups, `XXXX-XXXX-XXXX-XXXX`. */
export function formatPairingCode(random: Uint8Array): string {
  let bits = 0n;
  for (const byte of random.subarray(0, 10)) bits = (bits << 8n) | BigInt(byte);
  let code = "";
  for (let i = 0; i < 16; i++) {
    code = ALPHABET[Number(bits & 31n)] + code;
    bits >>= 5n;
  }
  return code.match(/.{4}/g)!.join("-");
}

/** A typed code as stored: upper case, dashes and spaces dropped, Crockford's look-alikes read as digits. */
export function normalizePairingCode(typed: string): string {
  return typed.toUpperCase().replace(/[\s-]/g, "").replace(/[IL]/g, "1").replace(/O/g, "0");
}

/** The prefixes of the device's secrets: high entropy (32 random bytes), so one SHA-256 keeps them unguessable at rest. */
export const CREDENTIAL_PREFIX = "pfdc_";
export const PUBLISH_KEY_PREFIX = "pfpk_";
