import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { SignJWT, type JWTPayload } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadKeys, type PlatformKeys } from "../../services/kit/auth/keys.js";
import { mintToken, TokenVerifier } from "../../services/kit/auth/tokens.js";
import { loadConfig } from "../../services/kit/runtime/config.js";

const HOUR = 3600;
const DAY = 24 * HOUR;

let dataDir: string;
let keys: PlatformKeys;
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "pf-keys-"));
  keys = await loadKeys(loadConfig({ PF_DATA_DIR: dataDir }));
});
afterAll(() => rm(dataDir, { recursive: true, force: true }));

/** A token signed with the platform's key, with claims chosen by the test (as an attacker holding a signer would not). */
function signed(claims: JWTPayload & { kind: string; sub: string }): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ iss: "pf", aud: "pf", iat: now, exp: now + HOUR, ...claims })
    .setProtectedHeader({ alg: "EdDSA", kid: keys.kid, typ: "JWT" })
    .sign(keys.signing);
}

describe("token issuer", () => {
  it("is pf: a token without one or from another issuer is refused", async () => {
    const verifier = new TokenVerifier(keys);
    const minted = await mintToken(keys, { kind: "user", sub: "usr_a1" });
    expect(JSON.parse(Buffer.from(minted.split(".")[1], "base64url").toString())).toMatchObject({ iss: "pf" });
    await expect(verifier.verify(minted)).resolves.toMatchObject({ sub: "usr_a1" });
    await expect(verifier.verify(await signed({ kind: "user", sub: "usr_a1" }))).resolves.toMatchObject({});
    await expect(verifier.verify(await signed({ kind: "user", sub: "usr_a1", iss: "evil" }))).rejects.toThrow(/iss/);
    await expect(verifier.verify(await signed({ kind: "user", sub: "usr_a1", iss: undefined }))).rejects.toThrow(/iss/);
  });
});

describe("token lifetime", () => {
  const now = () => Math.floor(Date.now() / 1000);

  it("is capped per kind: user and service a day, app 30 days; exp = 1e20 is refused", async () => {
    const verifier = new TokenVerifier(keys);
    const cases = [
      { kind: "user", sub: "usr_a1", max: DAY },
      { kind: "service", sub: "svc:tips", max: DAY },
      { kind: "app", sub: "app:a1", max: 30 * DAY },
    ];
    for (const { kind, sub, max } of cases) {
      const iat = now();
      await expect(verifier.verify(await signed({ kind, sub, iat, exp: iat + max })), kind).resolves.toMatchObject({
        kind,
      });
      await expect(verifier.verify(await signed({ kind, sub, iat, exp: iat + max + 1 })), kind).rejects.toThrow(
        /at most/,
      );
      await expect(verifier.verify(await signed({ kind, sub, iat, exp: 1e20 })), kind).rejects.toThrow();
    }
  });

  it("cannot be stretched by an iat in the future", async () => {
    const iat = now() + 10 * DAY;
    const token = await signed({ kind: "user", sub: "usr_a1", iat, exp: iat + HOUR });
    await expect(new TokenVerifier(keys).verify(token)).rejects.toThrow(/iat/);
  });

  it("over the cap is refused at minting", async () => {
    await expect(mintToken(keys, { kind: "user", sub: "usr_a1", ttl: DAY + 1 })).rejects.toThrow(/at most/);
    await expect(mintToken(keys, { kind: "app", app_id: "a1", ttl: 30 * DAY })).resolves.toEqual(expect.any(String));
  });
});

describe("the token command", () => {
  const run = (...args: string[]) =>
    promisify(execFile)("node_modules/.bin/tsx", ["services/kit/auth/token-cli.ts", ...args], {
      env: { ...process.env, PF_DATA_DIR: dataDir, PF_JWT_PRIVATE_KEY: "", PF_JWT_PUBLIC_KEYS: "" },
      timeout: 30_000,
    });
  const refusal = (...args: string[]) =>
    run(...args).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );

  it("refuses what the platform would refuse: a subject of another kind, a lifetime over the cap", async () => {
    const [misfit, tooLong] = await Promise.all([
      refusal("--kind", "service", "--svc", "tips", "--sub", "usr_x"),
      refusal("--kind", "user", "--sub", "usr_x", "--ttl", String(DAY + 1)),
    ]);
    expect(misfit).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/sub "usr_x" does not fit a service token/),
    });
    expect(tooLong).toMatchObject({ code: 2, stderr: expect.stringMatching(/at most 86400 seconds/) });
  }, 60_000);

  it("mints what the platform takes, up to the cap", async () => {
    const { stdout } = await run("--kind", "app", "--app-id", "a1", "--ttl", String(30 * DAY));
    await expect(new TokenVerifier(keys).verify(stdout.trim())).resolves.toMatchObject({ kind: "app", sub: "app:a1" });
  }, 60_000);
});
