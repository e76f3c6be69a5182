import { getOption } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { NetworkAdminService } from "../../gen/pf/network/v1/admin_pb.js";
import { StaffRole } from "../../gen/pf/network/v1/network_pb.js";
import { access, Actor, designed, relations } from "../../gen/pf/v1/options_pb.js";
import { ProblemSchema } from "../../gen/pf/v1/problem_pb.js";
import type { TokenClaims } from "../../services/kit/auth/tokens.js";
import { usePlatform } from "../support/platform.js";

const t = usePlatform({ services: ["network"] });

/** One valid request per admin RPC; the refusals below vary only the caller. */
const requests: Record<string, object> = {
  setStaff: { subject: "usr_aa1", role: StaffRole.ADMIN },
  removeStaff: { subject: "usr_aa1" },
  setBlock: { blocker: "usr_aa1", blocked: "usr_aa2" },
  removeBlock: { blocker: "usr_aa1", blocked: "usr_aa2" },
  upsertSubject: { id: "usr_aa1" },
  linkLegacyId: { service: "tips", localId: "aa-1", subject: "usr_aa1" },
  setGithubToken: { token: "" },
};

/** The problem a call is answered with, or undefined. */
async function answered(rpc: string, claims: TokenClaims | undefined, headers: Record<string, string> = {}) {
  const token = claims ? await t.token(claims) : undefined;
  const admin = t.client(NetworkAdminService, token) as unknown as Record<
    string,
    (request: object, options: object) => Promise<unknown>
  >;
  try {
    await admin[rpc](requests[rpc], { headers });
    return undefined;
  } catch (error) {
    const [problem] = (error as ConnectError).findDetails(ProblemSchema);
    if (!problem) throw error;
    return problem;
  }
}

/** The problem code a call is answered with, or "ok". */
async function outcome(rpc: string, claims: TokenClaims | undefined, headers: Record<string, string> = {}) {
  return (await answered(rpc, claims, headers))?.code ?? "ok";
}

const rpcs = NetworkAdminService.methods.map((method) => ({
  name: method.localName,
  method,
  rule: getOption(method, access),
}));

describe.each(rpcs)("the designed admin RPC $name", ({ name, method, rule }) => {
  const admin: TokenClaims = { kind: "service", svc: "network", caps: ["network.admin"] };

  it("is refused without a token, without network.admin, to apps, people and mods", async () => {
    expect(await outcome(name, undefined)).toBe("auth.required");
    expect(await outcome(name, { ...admin, caps: ["network.staff.read"] })).toBe("auth.capability_missing");
    expect(await outcome(name, { kind: "app", app_id: "a1", fp: true, caps: ["network.admin"] })).toBe(
      "auth.internal_only",
    );
    expect(await outcome(name, { kind: "user", sub: "usr_owner9" })).toBe("auth.internal_only");
    expect(await outcome(name, { ...admin, mod: "mod_1" })).toBe("auth.never_to_mods");
  });

  it("is marked designed (the spec shows no route for it)", () => {
    expect(getOption(method, designed)).toBe(true);
  });

  it("acts for a person where it declares so (403 auth.person_required without X-PF-Subject)", async () => {
    const answer = await outcome(name, admin);
    if (rule.actor === Actor.PERSON) expect(answer).toBe("auth.person_required");
    else expect(answer).not.toMatch(/^auth\./);
  });

  it("takes X-PF-Subject only where it acts for a person", async () => {
    const answer = await outcome(name, admin, { "x-pf-subject": "usr_owner9" });
    if (rule.actingSubject) expect(answer).not.toMatch(/^auth\./);
    else expect(answer).toBe("auth.acting_subject_refused");
  });
});

describe("the code-hosting token's owner", () => {
  const admin: TokenClaims = { kind: "service", svc: "network", caps: ["network.admin"] };

  it("is the declared relation owner, refused before the handler with integration.github.owner_only", async () => {
    expect(getOption(NetworkAdminService, relations)).toEqual([
      expect.objectContaining({ name: "owner", refusal: "integration.github.owner_only", actingForNobody: false }),
    ]);
    expect(getOption(NetworkAdminService.method.setGithubToken, access).relation).toMatchObject({
      name: "owner",
      scopeField: "",
    });
    const network = t.client(NetworkAdminService, await t.token(admin));
    await network.setStaff({ subject: "usr_ownr7", role: StaffRole.OWNER });
    await network.setStaff({ subject: "usr_admn7", role: StaffRole.ADMIN });
    for (const person of ["usr_admn7", "usr_nobody7"]) {
      const problem = await answered("setGithubToken", admin, { "x-pf-subject": person });
      expect(problem, person).toMatchObject({ status: 403, code: "integration.github.owner_only" });
      expect(problem?.extensions, person).toMatchObject({ relation: "network.owner" });
    }
    expect(await outcome("setGithubToken", admin, { "x-pf-subject": "usr_ownr7" })).toBe("ok");
  });
});
