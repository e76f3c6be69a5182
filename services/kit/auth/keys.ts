import {
  createLocalJWKSet,
  exportJWK,
  generateKeyPair,
  importJWK,
  importPKCS8,
  type JWK,
  type JWTVerifyGetKey,
  type CryptoKey,
} from "jose";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Config } from "../runtime/config.js";

/** The platform's signing key and the key set tokens are verified against. */
export interface PlatformKeys {
  signing: CryptoKey;
  kid: string;
  verifying: JWTVerifyGetKey;
}

/**
 * PF_JWT_PRIVATE_KEY (JWK or PKCS#8 PEM) and PF_JWT_PUBLIC_KEYS (JWKS); when
 * unset, a dev key pair made on first start under <data>/keys/.
 */
export async function loadKeys(config: Config): Promise<PlatformKeys> {
  const privateJwk = config.jwtPrivateKey ? await parsePrivate(config.jwtPrivateKey) : await devKey(config.dataDir);
  const kid = privateJwk.kid ?? "pf-1";
  const signing = (await importJWK({ ...privateJwk, alg: "EdDSA" }, "EdDSA")) as CryptoKey;
  const { d: _secret, ...publicJwk } = privateJwk;
  const jwks = config.jwtPublicKeys
    ? (JSON.parse(config.jwtPublicKeys) as { keys: JWK[] })
    : { keys: [{ ...publicJwk, kid, alg: "EdDSA", use: "sig" }] };
  return { signing, kid, verifying: createLocalJWKSet(jwks) };
}

async function parsePrivate(value: string): Promise<JWK> {
  if (value.trim().startsWith("{")) return JSON.parse(value) as JWK;
  const key = await importPKCS8(value, "EdDSA", { extractable: true });
  return { ...(await exportJWK(key)), kid: "pf-1" };
}

async function devKey(dataDir: string): Promise<JWK> {
  const dir = join(dataDir, "keys");
  const file = join(dir, "jwt-private.jwk.json");
  try {
    return JSON.parse(await readFile(file, "utf8")) as JWK;
  } catch {
    const { privateKey } = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
    const jwk = { ...(await exportJWK(privateKey)), kid: "pf-dev-1" };
    await mkdir(dir, { recursive: true });
    // wx: two processes starting at once keep the first key written.
    await writeFile(file, JSON.stringify(jwk), { mode: 0o600, flag: "wx" }).catch(() => undefined);
    return JSON.parse(await readFile(file, "utf8")) as JWK;
  }
}
