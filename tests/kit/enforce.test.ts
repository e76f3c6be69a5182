import { create, setExtension, type DescMethod, type MessageInitShape } from "@bufbuild/protobuf";
import { MethodOptionsSchema } from "@bufbuild/protobuf/wkt";
import { ConnectError, createContextValues, type UnaryRequest } from "@connectrpc/connect";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ProblemSchema } from "../../gen/pf/v1/problem_pb.js";
import { access, AccessSchema, Visibility } from "../../gen/pf/v1/options_pb.js";
import { enforcement } from "../../services/kit/auth/enforce.js";
import { loadKeys, type PlatformKeys } from "../../services/kit/auth/keys.js";
import { principalKey, type Principal } from "../../services/kit/auth/principal.js";
import { mintToken, TokenVerifier, type TokenClaims } from "../../services/kit/auth/tokens.js";
import { loadConfig } from "../../services/kit/runtime/config.js";

let keys: PlatformKeys;
let verifier: TokenVerifier;
beforeAll(async () => {
  keys = await loadKeys(loadConfig({ PF_DATA_DIR: await mkdtemp(join(tmpdir(), "pf-enforce-")) }));
  verifier = new TokenVerifier(keys);
});

/** An RPC carrying only the access rule under test: enforcement reads nothing else of it. */
function rpcWith(rule: MessageInitShape<typeof AccessSchema> | undefined): DescMethod {
  const options = create(MethodOptionsSchema);
  if (rule) setExtension(options, access, create(AccessSchema, rule));
  return { proto: { options }, name: "Probe" } as unknown as DescMethod;
}

/** Runs enforcement for one call; answers the principal the handler would see, or the problem. */
async function call(rule: MessageInitShape<typeof AccessSchema> | undefined, claims?: TokenClaims, headers: Record<string, string> = {}) {
  const header = new Headers(headers);
  if (claims) header.set("authorization", `Bearer ${await mintToken(keys, claims)}`);
  const req = { method: rpcWith(rule), header, contextValues: createContextValues() } as unknown as UnaryRequest;
  try {
    await enforcement(verifier)(async (r) => ({ principal: r.contextValues.get(principalKey) }) as never)(req);
    return { principal: req.contextValues.get(principalKey) as Principal };
  } catch (error) {
    const [problem] = (error as ConnectError).findDetails(ProblemSchema);
    return { status: problem.status, code: problem.code };
  }
}

const service = (svc: string, caps: string[] = []): TokenClaims => ({ kind: "service", svc, caps });
const app = (caps: string[], fp = false): TokenClaims => ({ kind: "app", app_id: "a1", caps, fp });
const user: TokenClaims = { kind: "user", sub: "usr_u1" };

describe("the enforcement interceptor, rule by rule", () => {
  it("refuses every caller of an RPC that declares no rule", async () => {
    expect(await call(undefined, service("tips", ["x"]))).toEqual({ status: 403, code: "auth.no_access_rule" });
  });

  it("lets anonymous callers in only where the route allows it: public routes, and first-party ones the spec opens to them", async () => {
    expect((await call({ visibility: Visibility.PUBLIC, anonymous: true })).principal?.kind).toBe("anonymous");
    expect(await call({ visibility: Visibility.PUBLIC, capabilities: ["x"] })).toEqual({ status: 401, code: "auth.required" });
    expect((await call({ visibility: Visibility.FIRST_PARTY, anonymous: true })).principal?.kind).toBe("anonymous");
    expect(await call({ visibility: Visibility.FIRST_PARTY, capabilities: ["x"] })).toEqual({ status: 401, code: "auth.required" });
    expect(await call({ visibility: Visibility.INTERNAL, anonymous: true })).toEqual({ status: 401, code: "auth.required" });
    expect(await call({ visibility: Visibility.PARTNER, anonymous: true })).toEqual({ status: 401, code: "auth.required" });
    expect(await call({ visibility: Visibility.PUBLIC, anonymous: true }, undefined, { "x-pf-subject": "usr_a1" })).toEqual({ status: 403, code: "auth.header_refused" });
  });

  it("refuses a malformed Authorization header", async () => {
    const header = new Headers({ authorization: "Basic abc" });
    const req = { method: rpcWith({ visibility: Visibility.PUBLIC, anonymous: true }), header, contextValues: createContextValues() } as unknown as UnaryRequest;
    await expect(enforcement(verifier)(async () => ({}) as never)(req)).rejects.toThrow(/Bearer/);
  });

  it("needs one of `capabilities` and every one of `all_capabilities` from services and apps", async () => {
    const either = { visibility: Visibility.PARTNER, capabilities: ["a", "b"] };
    expect((await call(either, service("tips", ["b"]))).principal?.service).toBe("tips");
    expect((await call(either, service("tips", ["c"]))).code).toBe("auth.capability_missing");
    const both = { visibility: Visibility.PARTNER, allCapabilities: ["a", "b"] };
    expect((await call(both, app(["a", "b"]))).principal?.appId).toBe("a1");
    expect((await call(both, app(["a"]))).code).toBe("auth.capability_missing");
  });

  it("checks people by ownership in the service, not by capability, and keeps them off internal and no_people routes", async () => {
    expect((await call({ visibility: Visibility.FIRST_PARTY, capabilities: ["a"] }, user)).principal?.sub).toBe("usr_u1");
    expect((await call({ visibility: Visibility.INTERNAL, capabilities: ["a"] }, user)).code).toBe("auth.internal_only");
    expect((await call({ visibility: Visibility.FIRST_PARTY, capabilities: ["a"], noPeople: true }, user)).code).toBe("auth.people_refused");
  });

  it("keeps apps off internal routes, third-party apps off first-party ones, and every app off never_to_apps", async () => {
    expect((await call({ visibility: Visibility.INTERNAL, capabilities: ["a"] }, app(["a"], true))).code).toBe("auth.internal_only");
    expect((await call({ visibility: Visibility.FIRST_PARTY, capabilities: ["a"] }, app(["a"]))).code).toBe("auth.first_party_only");
    expect((await call({ visibility: Visibility.FIRST_PARTY, capabilities: ["a"] }, app(["a"], true))).principal?.fp).toBe(true);
    expect((await call({ visibility: Visibility.PARTNER, capabilities: ["a"] }, app(["a"]))).principal?.kind).toBe("app");
    expect((await call({ visibility: Visibility.PUBLIC, capabilities: ["a"], neverToApps: true }, app(["a"], true))).code).toBe("auth.never_to_apps");
  });

  it("refuses a mod's token where the route is never to mods", async () => {
    const rule = { visibility: Visibility.FIRST_PARTY, capabilities: ["a"], neverToMods: true };
    expect((await call(rule, { ...service("games", ["a"]), mod: "mod_1" })).code).toBe("auth.never_to_mods");
    expect((await call(rule, service("games", ["a"]))).principal?.mod).toBeUndefined();
  });

  it("admits only the named services where the spec says so", async () => {
    const rule = { visibility: Visibility.INTERNAL, capabilities: ["a"], onlyServices: ["billing"] };
    expect((await call(rule, service("billing", ["a"]))).principal?.service).toBe("billing");
    expect((await call(rule, service("tips", ["a"]))).code).toBe("auth.service_not_allowed");
  });

  it("honours X-PF-Subject from services on routes that act for a person, and checks its form", async () => {
    const rule = { visibility: Visibility.FIRST_PARTY, capabilities: ["a"], actingSubject: true };
    expect((await call(rule, service("deals", ["a"]), { "x-pf-subject": "usr_p1" })).principal?.actingSubject).toBe("usr_p1");
    expect(await call(rule, service("deals", ["a"]), { "x-pf-subject": "app:x" })).toEqual({ status: 400, code: "request.invalid" });
    expect(await call({ ...rule, actingSubject: false }, service("deals", ["a"]), { "x-pf-subject": "usr_p1" })).toEqual({ status: 400, code: "auth.acting_subject_refused" });
    expect(await call(rule, user, { "x-pf-subject": "usr_p1" })).toEqual({ status: 403, code: "auth.header_refused" });
  });

  it("refuses every other X-PF-* header (groups, entitlements) from anyone but services", async () => {
    const rule = { visibility: Visibility.FIRST_PARTY, capabilities: ["a"] };
    for (const name of ["x-pf-groups", "x-pf-entitlements"]) {
      expect(await call(rule, user, { [name]: "x" })).toEqual({ status: 403, code: "auth.header_refused" });
      expect(await call(rule, app(["a"], true), { [name]: "x" })).toEqual({ status: 403, code: "auth.header_refused" });
      expect((await call(rule, service("vip", ["a"]), { [name]: "x" })).principal?.service).toBe("vip");
    }
  });

  it("honours X-PF-Staff: 1 from services only", async () => {
    const rule = { visibility: Visibility.FIRST_PARTY, capabilities: ["a"] };
    expect((await call(rule, service("deals", ["a"]), { "x-pf-staff": "1" })).principal?.staff).toBe(true);
    expect(await call(rule, service("deals", ["a"]), { "x-pf-staff": "yes" })).toEqual({ status: 400, code: "request.invalid" });
    expect(await call(rule, app(["a"], true), { "x-pf-staff": "1" })).toEqual({ status: 403, code: "auth.header_refused" });
  });

  it("honours X-PF-Origin: ai from services, and from apps only where the route says so", async () => {
    const rule = { visibility: Visibility.FIRST_PARTY, capabilities: ["a"] };
    expect((await call(rule, service("deals", ["a"]), { "x-pf-origin": "ai" })).principal?.origin).toBe("ai");
    expect(await call(rule, app(["a"], true), { "x-pf-origin": "ai" })).toEqual({ status: 403, code: "auth.header_refused" });
    expect((await call({ ...rule, originFromApps: true }, app(["a"], true), { "x-pf-origin": "ai" })).principal?.origin).toBe("ai");
    expect(await call(rule, user, { "x-pf-origin": "ai" })).toEqual({ status: 403, code: "auth.header_refused" });
    expect(await call(rule, service("deals", ["a"]), { "x-pf-origin": "human" })).toEqual({ status: 400, code: "request.invalid" });
  });
});
