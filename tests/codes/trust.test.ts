import { ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { CodesService } from "../../gen/pf/codes/v1/codes_pb.js";
import { TrustTier } from "../../gen/pf/codes/v1/releases_pb.js";
import { ProblemSchema } from "../../gen/pf/v1/problem_pb.js";
import type { TokenClaims } from "../../services/kit/auth/tokens.js";
import { usePlatform } from "../support/platform.js";
import { AUD, appManifest, codesCalls, freshApp } from "./support.js";

const t = usePlatform({ services: ["codes"] });
const codes = codesCalls(t);
const staffService: TokenClaims = { kind: "service", svc: "network", caps: ["codes.trust.manage"], aud: AUD };

/** The problem a SetTrust call answers, or "ok". */
async function setTrustAs(claims: TokenClaims, app: string, headers: Record<string, string> = {}) {
  const client = t.client(CodesService, await t.token(claims));
  try {
    await client.setTrust({ app, tier: TrustTier.VERIFIED, note: "Publisher verified." }, { headers });
    return "ok";
  } catch (error) {
    const [found] = ConnectError.from(error).findDetails(ProblemSchema);
    return `${found?.status} ${found?.code}`;
  }
}

describe("trust tiers: staff metadata, never settable through manage, never deciding anything", () => {
  it("staff set a tier on the designed RPC; reads show it on trust, lists and releases", async () => {
    const app = freshApp();
    const id = await codes.release(app, "1.0.0");
    expect(await setTrustAs(staffService, app)).toBe("ok");
    const trust = await t.http("GET", `/codes/api/v1/apps/${app}/trust`);
    expect(trust.body.trust).toMatchObject({ app, tier: "TRUST_TIER_VERIFIED", note: "Publisher verified." });
    expect((await t.http("GET", `/codes/api/v1/releases/${id}`)).body.release.trust_tier).toBe("TRUST_TIER_VERIFIED");
    const list = await t.http("GET", `/codes/api/v1/apps/${app}/releases`);
    expect(list.body.releases.trust.tier).toBe("TRUST_TIER_VERIFIED");
  });

  it("the tier grants nothing: a verified app is refused another app's release and another audience alike", async () => {
    const [verified, other] = [freshApp(), freshApp()];
    expect(await setTrustAs(staffService, verified)).toBe("ok");
    const theirs = await codes.release(other, "1.0.0");
    const answer = await codes.act(other, theirs, "revoke", {}, await codes.as(verified));
    expect(answer.body).toMatchObject({ status: 403, code: "codes.app_mismatch" });
  });

  it("refuses apps (even the app itself), people acting without staff, tokens for another audience and unset tiers", async () => {
    const app = freshApp();
    const own: TokenClaims = { kind: "app", app_id: app, caps: ["codes.release.manage"], aud: AUD };
    expect(await setTrustAs(own, app)).toBe("403 auth.internal_only");
    expect(await setTrustAs(staffService, app, { "x-pf-subject": "usr_a1" })).toBe("403 auth.staff_required");
    expect(await setTrustAs(staffService, app, { "x-pf-subject": "usr_a1", "x-pf-staff": "1" })).toBe("ok");
    expect(await setTrustAs({ ...staffService, aud: "pf" }, app)).toBe("401 auth.wrong_audience");
    const client = t.client(CodesService, await t.token(staffService));
    await expect(client.setTrust({ app, tier: TrustTier.UNSPECIFIED })).rejects.toThrow(/tier/);
  });

  it("needs the designed capability codes.trust.manage: any other service token for codes is refused, the tier unchanged", async () => {
    const app = freshApp();
    const bare: TokenClaims = { kind: "service", svc: "tips", caps: ["codes.release.manage"], aud: AUD };
    expect(await setTrustAs(bare, app)).toBe("403 auth.capability_missing");
    expect(await setTrustAs({ ...staffService, mod: "mod_1" }, app)).toBe("403 auth.never_to_mods");
    expect((await t.http("GET", `/codes/api/v1/apps/${app}/trust`)).body.trust.tier).toBe("TRUST_TIER_UNREVIEWED");
  });

  it("cannot be set through manage: trust fields in the request or the manifest are refused (400)", async () => {
    const app = freshApp();
    const inRequest = await codes.create(app, {
      manifest: appManifest("1.0.0"),
      compatibility: "*",
      trust_tier: "TRUST_TIER_VERIFIED",
    });
    expect(inRequest.body).toMatchObject({ status: 400, code: "request.invalid" });
    const inManifest = await codes.create(app, {
      manifest: appManifest("1.0.0", { trust: "verified" }),
      compatibility: "*",
    });
    expect(inManifest.body).toMatchObject({ status: 400, code: "codes.manifest_invalid", pointer: "/trust" });
    expect((await t.http("GET", `/codes/api/v1/apps/${app}/trust`)).body.trust.tier).toBe("TRUST_TIER_UNREVIEWED");
  });
});
