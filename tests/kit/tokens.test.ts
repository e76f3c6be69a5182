import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SignJWT } from "jose";
import { afterAll, describe, expect, it } from "vitest";
import { loadKeys } from "../../services/kit/auth/keys.js";
import { mintToken, TokenVerifier } from "../../services/kit/auth/tokens.js";
import { loadConfig } from "../../services/kit/runtime/config.js";

/** Key folders made here, removed once the file is done. */
const folders: string[] = [];
const keyFolder = async () => {
  const dir = await mkdtemp(join(tmpdir(), "pf-keys-"));
  folders.push(dir);
  return dir;
};
const keysIn = async () => loadKeys(loadConfig({ PF_DATA_DIR: await keyFolder() }));
afterAll(() => Promise.all(folders.map((dir) => rm(dir, { recursive: true, force: true }))));

describe("platform tokens", () => {
  it("mint EdDSA JWTs that verify with their claims", async () => {
    const keys = await keysIn();
    const token = await mintToken(keys, {
      kind: "service",
      svc: "tips",
      caps: ["tips.goal.create", "billing.transfer.create"],
    });
    expect(JSON.parse(Buffer.from(token.split(".")[0], "base64url").toString())).toMatchObject({ alg: "EdDSA" });
    const claims = await new TokenVerifier(keys).verify(token);
    expect(claims).toMatchObject({
      kind: "service",
      sub: "svc:tips",
      caps: ["tips.goal.create", "billing.transfer.create"],
      fp: false,
    });
  });

  it("refuse a token signed with another key, an expired one, and one whose sub does not fit its kind", async () => {
    const [mine, theirs] = [await keysIn(), await keysIn()];
    const verifier = new TokenVerifier(mine);
    await expect(verifier.verify(await mintToken(theirs, { kind: "user", sub: "usr_a1" }))).rejects.toThrow();
    await expect(verifier.verify(await mintToken(mine, { kind: "user", sub: "usr_a1", ttl: -10 }))).rejects.toThrow();
    const misfit = await new SignJWT({ kind: "user" })
      .setProtectedHeader({ alg: "EdDSA", kid: mine.kid, typ: "JWT" })
      .setIssuer("pf")
      .setSubject("svc:tips")
      .setAudience("pf")
      .setIssuedAt()
      .setExpirationTime("1h")
      .sign(mine.signing);
    await expect(verifier.verify(misfit)).rejects.toThrow(/sub/);
  });

  it("take a person's sub only by the one subject grammar: lowercase, 1 to 64 characters, at minting and verifying", async () => {
    const keys = await keysIn();
    const verifier = new TokenVerifier(keys);
    for (const sub of ["usr_ABC", "GST_abc", `usr_${"a".repeat(65)}`]) {
      await expect(mintToken(keys, { kind: "user", sub }), sub).rejects.toThrow(/sub/);
      const signed = await new SignJWT({ kind: "user" })
        .setProtectedHeader({ alg: "EdDSA", kid: keys.kid, typ: "JWT" })
        .setIssuer("pf")
        .setSubject(sub)
        .setAudience("pf")
        .setIssuedAt()
        .setExpirationTime("1h")
        .sign(keys.signing);
      await expect(verifier.verify(signed), sub).rejects.toThrow(/sub/);
    }
    const longest = `usr_${"a".repeat(64)}`;
    await expect(verifier.verify(await mintToken(keys, { kind: "user", sub: longest }))).resolves.toMatchObject({
      sub: longest,
    });
  });

  it("keep the dev key across starts in the data directory", async () => {
    const dir = await keyFolder();
    const first = await loadKeys(loadConfig({ PF_DATA_DIR: dir }));
    const second = await loadKeys(loadConfig({ PF_DATA_DIR: dir }));
    const token = await mintToken(first, { kind: "app", app_id: "a1" });
    await expect(new TokenVerifier(second).verify(token)).resolves.toMatchObject({ sub: "app:a1" });
  });
});

describe("tokens the platform did not mint as it mints them", () => {
  it("are refused without an expiry, or of another type", async () => {
    const keys = await keysIn();
    const verifier = new TokenVerifier(keys);
    const forever = await new SignJWT({ kind: "service" })
      .setProtectedHeader({ alg: "EdDSA", kid: keys.kid, typ: "JWT" })
      .setIssuer("pf")
      .setSubject("svc:tips")
      .setAudience("pf")
      .setIssuedAt()
      .sign(keys.signing);
    await expect(verifier.verify(forever)).rejects.toThrow(/exp/);
    const other = await new SignJWT({ kind: "service" })
      .setProtectedHeader({ alg: "EdDSA", kid: keys.kid, typ: "at+jwt" })
      .setIssuer("pf")
      .setSubject("svc:tips")
      .setAudience("pf")
      .setIssuedAt()
      .setExpirationTime("1h")
      .sign(keys.signing);
    await expect(verifier.verify(other)).rejects.toThrow(/typ/);
  });
});
