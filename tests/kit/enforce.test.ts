import { create, setExtension, type DescMethod, type MessageInitShape } from "@bufbuild/protobuf";
import { MethodOptionsSchema, ServiceOptionsSchema } from "@bufbuild/protobuf/wkt";
import { ConnectError, createContextValues, type UnaryRequest } from "@connectrpc/connect";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProblemSchema, type Problem } from "../../gen/pf/v1/problem_pb.js";
import { access, AccessSchema, Actor, token_audience, Visibility } from "../../gen/pf/v1/options_pb.js";
import { Admission, admittedCall, routeAccessOf } from "../../services/kit/auth/enforce.js";
import { loadKeys, type PlatformKeys } from "../../services/kit/auth/keys.js";
import { callerKey, type Caller, type Principal } from "../../services/kit/auth/principal.js";
import { mintToken, TokenVerifier, type TokenClaims } from "../../services/kit/auth/tokens.js";
import { loadConfig } from "../../services/kit/runtime/config.js";
import { probeService } from "../support/probe-service.js";
import { forged } from "../support/callers.js";

type Rule = MessageInitShape<typeof AccessSchema>;

let dataDir: string;
let keys: PlatformKeys;
let admission: Admission;
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "pf-enforce-"));
  keys = await loadKeys(loadConfig({ PF_DATA_DIR: dataDir }));
  admission = new Admission(new TokenVerifier(keys));
});
afterAll(() => rm(dataDir, { recursive: true, force: true }));

/**
 * A real RPC descriptor (file, service, method) carrying only the access rule
 * under test and, when given, its service's token audience: enforcement reads
 * nothing else of it.
 */
function rpcWith(rule: Rule | undefined, audience?: string): DescMethod {
  const methodOptions = create(MethodOptionsSchema);
  if (rule) setExtension(methodOptions, access, create(AccessSchema, rule));
  const serviceOptions = create(ServiceOptionsSchema);
  if (audience !== undefined) setExtension(serviceOptions, token_audience, audience);
  return probeService([{ name: "Probe", options: methodOptions }], serviceOptions).methods[0];
}

interface Answer {
  caller?: Caller;
  /** What the admitting rule established, every field present. */
  admitted?: { admittedBy: string; person?: string; staff?: string };
  principal?: Principal;
  status?: number;
  code?: string;
}

/** Admits one call; answers the caller the handler would see, or the refusal (status and code). */
async function call(
  rule: Rule | undefined,
  claims?: TokenClaims,
  headers: Record<string, string> = {},
  audience?: string,
): Promise<Answer> {
  const { caller, problem } = await admit(rule, claims, headers, audience);
  if (problem) return { status: problem.status, code: problem.code };
  const { admittedBy, person, staff } = caller!;
  return { caller, principal: caller?.principal, admitted: { admittedBy, person, staff } };
}

/** The whole refusal, for the assertions that read its detail. */
async function refusalOf(
  rule: Rule,
  claims?: TokenClaims,
  headers: Record<string, string> = {},
): Promise<Problem | undefined> {
  return (await admit(rule, claims, headers)).problem;
}

async function admit(
  rule: Rule | undefined,
  claims?: TokenClaims,
  headers: Record<string, string> = {},
  audience?: string,
) {
  const header = new Headers(headers);
  if (claims) header.set("authorization", `Bearer ${await mintToken(keys, claims)}`);
  try {
    return { caller: await admission.admit(rpcWith(rule, audience), header) };
  } catch (error) {
    const [problem] = (error as ConnectError).findDetails(ProblemSchema);
    return { problem };
  }
}

const service = (svc: string, caps: string[] = [], more: Partial<TokenClaims> = {}): TokenClaims => ({
  kind: "service",
  svc,
  caps,
  ...more,
});
const app = (caps: string[], fp = false): TokenClaims => ({ kind: "app", app_id: "a1", caps, fp });
const user: TokenClaims = { kind: "user", sub: "usr_u1" };
const guest: TokenClaims = { kind: "user", sub: "gst_g1" };

describe("the enforcement interceptor, rule by rule", () => {
  it("leaves the admitted caller in the call's context values, where handlers read it", async () => {
    const header = new Headers({ authorization: `Bearer ${await mintToken(keys, user)}` });
    const req = {
      method: rpcWith({ visibility: Visibility.FIRST_PARTY }),
      header,
      contextValues: createContextValues(),
    } as unknown as UnaryRequest;
    const seen = await admission.interceptor()(async (r) => r.contextValues.get(callerKey) as never)(req);
    expect(seen).toMatchObject({ admittedBy: "", person: "usr_u1", principal: { kind: "user", sub: "usr_u1" } });
  });

  it("takes the gateway's admission once, for the same method only, and only one this Admission answered", async () => {
    const method = rpcWith({ visibility: Visibility.PARTNER, capabilities: ["x"] });
    const other = rpcWith({ visibility: Visibility.PARTNER, capabilities: ["x"] });
    const allowed = new Headers({ authorization: `Bearer ${await mintToken(keys, service("tips", ["x"]))}` });
    const refused = new Headers({ authorization: `Bearer ${await mintToken(keys, service("tips", ["y"]))}` });
    const caller = await admission.admit(method, allowed);
    const values = admittedCall(method, caller);
    const run = (m: DescMethod, contextValues = values) =>
      admission.interceptor()(async (r) => r.contextValues.get(callerKey) as never)({
        method: m,
        header: refused,
        contextValues,
      } as unknown as UnaryRequest);
    // Handed for another method than it was admitted for, it is dropped and the call admitted on its own headers.
    await expect(run(other, admittedCall(other, caller))).rejects.toThrow(/capability/);
    await expect(run(other)).rejects.toThrow(/capability/);
    // Taken once; the same values passed again (a handler forwarding them) are admitted as sent.
    const fresh = admittedCall(method, await admission.admit(method, allowed));
    await expect(run(method, fresh)).resolves.toMatchObject({ principal: { service: "tips" } });
    await expect(run(method, admittedCall(method, caller))).resolves.toBe(caller);
    await expect(run(method, admittedCall(method, caller))).rejects.toThrow(/capability/);
    // A caller another Admission (or a test's stand-in) answered never counts here.
    const stranger = await new Admission(new TokenVerifier(keys)).admit(method, allowed);
    await expect(run(method, admittedCall(method, stranger))).rejects.toThrow(/capability/);
  });

  it("refuses every caller of an RPC that declares no rule", async () => {
    expect(await call(undefined, service("tips", ["x"]))).toEqual({ status: 403, code: "auth.no_access_rule" });
  });

  it("lets anonymous callers in only where the route allows it: public routes, and first-party ones the spec opens to them", async () => {
    expect((await call({ visibility: Visibility.PUBLIC, anonymous: true })).principal?.kind).toBe("anonymous");
    expect(await call({ visibility: Visibility.PUBLIC, capabilities: ["x"] })).toEqual({
      status: 401,
      code: "auth.required",
    });
    expect((await call({ visibility: Visibility.FIRST_PARTY, anonymous: true })).principal?.kind).toBe("anonymous");
    expect(await call({ visibility: Visibility.FIRST_PARTY, capabilities: ["x"] })).toEqual({
      status: 401,
      code: "auth.required",
    });
    expect(await call({ visibility: Visibility.INTERNAL, anonymous: true })).toEqual({
      status: 401,
      code: "auth.required",
    });
    expect(await call({ visibility: Visibility.PARTNER, anonymous: true })).toEqual({
      status: 401,
      code: "auth.required",
    });
    expect(
      await call({ visibility: Visibility.PUBLIC, anonymous: true }, undefined, { "x-pf-subject": "usr_a1" }),
    ).toEqual({ status: 403, code: "auth.header_refused" });
  });

  it("refuses a malformed Authorization header", async () => {
    const header = new Headers({ authorization: "Basic abc" });
    const req = {
      method: rpcWith({ visibility: Visibility.PUBLIC, anonymous: true }),
      header,
      contextValues: createContextValues(),
    } as unknown as UnaryRequest;
    await expect(admission.interceptor()(async () => ({}) as never)(req)).rejects.toThrow(/Bearer/);
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
    expect((await call({ visibility: Visibility.FIRST_PARTY, capabilities: ["a"] }, user)).principal?.sub).toBe(
      "usr_u1",
    );
    expect((await call({ visibility: Visibility.INTERNAL, capabilities: ["a"] }, user)).code).toBe(
      "auth.internal_only",
    );
    expect((await call({ visibility: Visibility.FIRST_PARTY, capabilities: ["a"], noPeople: true }, user)).code).toBe(
      "auth.people_refused",
    );
  });

  it("keeps apps off internal routes, third-party apps off first-party ones, and every app off never_to_apps", async () => {
    expect((await call({ visibility: Visibility.INTERNAL, capabilities: ["a"] }, app(["a"], true))).code).toBe(
      "auth.internal_only",
    );
    expect((await call({ visibility: Visibility.FIRST_PARTY, capabilities: ["a"] }, app(["a"]))).code).toBe(
      "auth.first_party_only",
    );
    expect(
      (await call({ visibility: Visibility.FIRST_PARTY, capabilities: ["a"] }, app(["a"], true))).principal?.fp,
    ).toBe(true);
    expect((await call({ visibility: Visibility.PARTNER, capabilities: ["a"] }, app(["a"]))).principal?.kind).toBe(
      "app",
    );
    expect(
      (await call({ visibility: Visibility.PUBLIC, capabilities: ["a"], neverToApps: true }, app(["a"], true))).code,
    ).toBe("auth.never_to_apps");
  });

  it("refuses a mod's token where the route is never to mods", async () => {
    const rule = { visibility: Visibility.FIRST_PARTY, capabilities: ["a"], neverToMods: true };
    expect((await call(rule, { ...service("games", ["a"]), mod: "mod_1" })).code).toBe("auth.never_to_mods");
    expect((await call(rule, service("games", ["a"]))).principal?.mod).toBeUndefined();
  });

  it("refuses a mod's token on every internal route, never_to_mods or not: internal is never granted to mods", async () => {
    const rule = { visibility: Visibility.INTERNAL, capabilities: ["a"] };
    expect(await call(rule, service("games", ["a"], { mod: "mod_1" }))).toEqual({
      status: 403,
      code: "auth.never_to_mods",
    });
    expect((await call(rule, service("games", ["a"]))).principal?.service).toBe("games");
    // Elsewhere a mod's token is let in where its capability is.
    expect(
      (await call({ visibility: Visibility.PARTNER, capabilities: ["a"] }, service("games", ["a"], { mod: "mod_1" })))
        .principal?.mod,
    ).toBe("mod_1");
  });

  it("admits only the named services where the spec says so", async () => {
    const rule = { visibility: Visibility.INTERNAL, capabilities: ["a"], onlyServices: ["billing"] };
    expect((await call(rule, service("billing", ["a"]))).principal?.service).toBe("billing");
    expect((await call(rule, service("tips", ["a"]))).code).toBe("auth.service_not_allowed");
  });

  it("honours X-PF-Subject from services on routes that act for a person, and checks its form", async () => {
    const rule = { visibility: Visibility.FIRST_PARTY, capabilities: ["a"], actingSubject: true };
    expect((await call(rule, service("deals", ["a"]), { "x-pf-subject": "usr_p1" })).principal?.actingSubject).toBe(
      "usr_p1",
    );
    expect(await call(rule, service("deals", ["a"]), { "x-pf-subject": "app:x" })).toEqual({
      status: 400,
      code: "request.invalid",
    });
    // The one subject grammar: `usr_ABC` would be another person than `usr_abc`, and the body is 1 to 64 characters.
    for (const subject of ["usr_ABC", "USR_abc", `usr_${"a".repeat(65)}`, "usr_"])
      expect(await call(rule, service("deals", ["a"]), { "x-pf-subject": subject }), subject).toEqual({
        status: 400,
        code: "request.invalid",
      });
    const longest = `gst_${"a".repeat(64)}`;
    expect((await call(rule, service("deals", ["a"]), { "x-pf-subject": longest })).principal?.actingSubject).toBe(
      longest,
    );
    // Routes that are neither first-party nor acting for a person refuse it.
    const partner = { visibility: Visibility.PARTNER, capabilities: ["a"] };
    expect(await call(partner, service("deals", ["a"]), { "x-pf-subject": "usr_p1" })).toEqual({
      status: 400,
      code: "auth.acting_subject_refused",
    });
    expect(
      await call({ ...partner, visibility: Visibility.INTERNAL }, service("deals", ["a"]), {
        "x-pf-subject": "usr_p1",
      }),
    ).toEqual({ status: 400, code: "auth.acting_subject_refused" });
    expect(await call(rule, user, { "x-pf-subject": "usr_p1" })).toEqual({ status: 403, code: "auth.header_refused" });
  });

  it("accepts X-PF-Subject from services on every first-party route: first-party means services and the people acting through them", async () => {
    const rule = { visibility: Visibility.FIRST_PARTY, capabilities: ["a"] };
    const answer = await call(rule, service("deals", ["a"]), { "x-pf-subject": "usr_p1" });
    expect(answer.caller).toMatchObject({ person: "usr_p1", principal: { kind: "service", actingSubject: "usr_p1" } });
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
    expect(await call(rule, service("deals", ["a"]), { "x-pf-staff": "yes" })).toEqual({
      status: 400,
      code: "request.invalid",
    });
    expect(await call(rule, app(["a"], true), { "x-pf-staff": "1" })).toEqual({
      status: 403,
      code: "auth.header_refused",
    });
  });

  it("honours X-PF-Origin: ai from services, and from apps only where the route says so", async () => {
    const rule = { visibility: Visibility.FIRST_PARTY, capabilities: ["a"] };
    expect((await call(rule, service("deals", ["a"]), { "x-pf-origin": "ai" })).principal?.origin).toBe("ai");
    expect(await call(rule, app(["a"], true), { "x-pf-origin": "ai" })).toEqual({
      status: 403,
      code: "auth.header_refused",
    });
    expect(
      (await call({ ...rule, originFromApps: true }, app(["a"], true), { "x-pf-origin": "ai" })).principal?.origin,
    ).toBe("ai");
    expect(await call(rule, user, { "x-pf-origin": "ai" })).toEqual({ status: 403, code: "auth.header_refused" });
    expect(await call(rule, service("deals", ["a"]), { "x-pf-origin": "human" })).toEqual({
      status: 400,
      code: "request.invalid",
    });
  });
});

describe("declared actors: whom a call acts for", () => {
  const rule = (actor: Actor) => ({ visibility: Visibility.FIRST_PARTY, capabilities: ["a"], actor });
  const person = { "x-pf-subject": "usr_p1" };
  const staffPerson = { "x-pf-subject": "usr_p1", "x-pf-staff": "1" };

  it("ACTOR_PERSON: a user token (guests too), or a service naming the person; nobody else", async () => {
    expect((await call(rule(Actor.PERSON), user)).admitted).toEqual({
      admittedBy: "",
      person: "usr_u1",
      staff: undefined,
    });
    expect((await call(rule(Actor.PERSON), guest)).caller?.person).toBe("gst_g1");
    expect((await call(rule(Actor.PERSON), service("tips", ["a"]), person)).caller?.person).toBe("usr_p1");
    expect(await call(rule(Actor.PERSON), service("tips", ["a"]))).toEqual({
      status: 403,
      code: "auth.person_required",
    });
    expect(await call(rule(Actor.PERSON), app(["a"], true))).toEqual({ status: 403, code: "auth.person_required" });
  });

  it("ACTOR_MEMBER: a network user (usr_), never a guest, never a caller acting for nobody", async () => {
    expect((await call(rule(Actor.MEMBER), user)).caller?.person).toBe("usr_u1");
    expect((await call(rule(Actor.MEMBER), service("tips", ["a"]), person)).caller?.person).toBe("usr_p1");
    expect(await call(rule(Actor.MEMBER), guest)).toEqual({ status: 403, code: "auth.member_required" });
    expect(await call(rule(Actor.MEMBER), service("tips", ["a"]), { "x-pf-subject": "gst_g1" })).toEqual({
      status: 403,
      code: "auth.member_required",
    });
    expect(await call(rule(Actor.MEMBER), service("tips", ["a"]))).toEqual({
      status: 403,
      code: "auth.member_required",
    });
    expect(await call(rule(Actor.MEMBER), app(["a"], true))).toEqual({ status: 403, code: "auth.member_required" });
  });

  it("ACTOR_STAFF: a service or app acting for nobody, or a service vouching for a staff person; never a person's own token", async () => {
    expect((await call(rule(Actor.STAFF), service("tips", ["a"]))).admitted).toEqual({
      admittedBy: "",
      person: undefined,
      staff: "svc:tips",
    });
    expect((await call(rule(Actor.STAFF), app(["a"], true))).caller?.staff).toBe("app:a1");
    expect((await call(rule(Actor.STAFF), service("tips", ["a"]), staffPerson)).admitted).toEqual({
      admittedBy: "",
      person: "usr_p1",
      staff: "usr_p1",
    });
    expect(await call(rule(Actor.STAFF), service("tips", ["a"]), person)).toEqual({
      status: 403,
      code: "auth.staff_required",
    });
    expect(await call(rule(Actor.STAFF), user)).toEqual({ status: 403, code: "auth.staff_required" });
    expect(await call(rule(Actor.STAFF), user, { "x-pf-staff": "1" })).toEqual({
      status: 403,
      code: "auth.header_refused",
    });
  });

  it("ACTOR_PLATFORM_STAFF: as staff, but never an app", async () => {
    expect((await call(rule(Actor.PLATFORM_STAFF), service("tips", ["a"]))).caller?.staff).toBe("svc:tips");
    expect((await call(rule(Actor.PLATFORM_STAFF), service("tips", ["a"]), staffPerson)).caller?.staff).toBe("usr_p1");
    expect(await call(rule(Actor.PLATFORM_STAFF), app(["a"], true))).toEqual({
      status: 403,
      code: "auth.staff_required",
    });
    expect(await call(rule(Actor.PLATFORM_STAFF), service("tips", ["a"]), person)).toEqual({
      status: 403,
      code: "auth.staff_required",
    });
    expect(await call(rule(Actor.PLATFORM_STAFF), user)).toEqual({ status: 403, code: "auth.staff_required" });
  });

  it("ACTOR_AI_OUTPUT: a service acting for nobody that marks what it sends X-PF-Origin: ai", async () => {
    const ai = { "x-pf-origin": "ai" };
    const refused = { status: 403, code: "auth.ai_origin_required" };
    expect((await call(rule(Actor.AI_OUTPUT), service("tips", ["a"]), ai)).caller?.principal.origin).toBe("ai");
    expect(await call(rule(Actor.AI_OUTPUT), service("tips", ["a"]))).toEqual(refused);
    expect(await call(rule(Actor.AI_OUTPUT), service("tips", ["a"]), { ...ai, ...person })).toEqual(refused);
    expect(await call(rule(Actor.AI_OUTPUT), user)).toEqual(refused);
  });

  it("refuses an actor's caller only after its token: a caller without the capability hears that first", async () => {
    expect(await call(rule(Actor.STAFF), service("tips", ["b"]))).toEqual({
      status: 403,
      code: "auth.capability_missing",
    });
  });
});

describe("a token carrying `mod` is a mod, whatever its kind: capabilities required, no person, no staff", () => {
  const mod = { mod: "mod_1" };
  const personRule = { visibility: Visibility.FIRST_PARTY, capabilities: ["a"], actingSubject: true };

  it("a mod's user token is never the person it names: refused where a person or member acts, no person elsewhere", async () => {
    const modUser = { ...user, ...mod, caps: ["a"] };
    expect(await call({ ...personRule, actor: Actor.PERSON }, modUser)).toEqual({
      status: 403,
      code: "auth.person_required",
    });
    expect(await call({ ...personRule, actor: Actor.MEMBER }, modUser)).toEqual({
      status: 403,
      code: "auth.member_required",
    });
    expect((await call(personRule, modUser)).admitted).toEqual({ admittedBy: "", person: undefined, staff: undefined });
  });

  it("a mod's user token needs the route's capability, where a person's own token needs none", async () => {
    expect((await call(personRule, user)).caller?.person).toBe("usr_u1");
    expect(await call(personRule, { ...user, ...mod })).toEqual({ status: 403, code: "auth.capability_missing" });
    // Nor does an unchecked capability, or a rule naming none, let a mod in: it acts only by what was granted to it.
    const unchecked = { visibility: Visibility.PUBLIC, capabilities: ["s.read"], capabilityUnchecked: true };
    expect(await call(unchecked, service("tips", [], mod))).toEqual({ status: 403, code: "auth.capability_missing" });
    expect((await call(unchecked, service("tips", ["s.read"], mod))).principal?.mod).toBe("mod_1");
    expect(await call({ visibility: Visibility.FIRST_PARTY }, { ...user, ...mod })).toEqual({
      status: 403,
      code: "auth.never_to_mods",
    });
  });

  it("a mod's service or app token is never staff, and names no person (X-PF-Subject, X-PF-Staff: 403 auth.never_to_mods)", async () => {
    const staffRule = { visibility: Visibility.FIRST_PARTY, capabilities: ["a"], actingSubject: true };
    expect(await call({ ...staffRule, actor: Actor.STAFF }, service("tips", ["a"], mod))).toEqual({
      status: 403,
      code: "auth.staff_required",
    });
    expect(await call({ ...staffRule, actor: Actor.STAFF }, { ...app(["a"], true), ...mod })).toEqual({
      status: 403,
      code: "auth.staff_required",
    });
    const named: Record<string, string>[] = [
      { "x-pf-subject": "usr_p1" },
      { "x-pf-subject": "usr_p1", "x-pf-staff": "1" },
    ];
    for (const headers of named) {
      expect(await call({ ...staffRule, actor: Actor.PERSON }, service("tips", ["a"], mod), headers)).toEqual({
        status: 403,
        code: "auth.never_to_mods",
      });
    }
  });
});

describe("no_ai_origin: a person's own act is never AI output", () => {
  const rule = { visibility: Visibility.FIRST_PARTY, capabilities: ["a"], actor: Actor.PERSON, noAiOrigin: true };
  const named = { "x-pf-subject": "usr_p1" };

  it("refuses X-PF-Origin: ai beside the person it names (403 auth.person_required); the person alone is admitted", async () => {
    expect((await call(rule, service("tips", ["a"]), named)).caller?.person).toBe("usr_p1");
    expect(await call(rule, service("tips", ["a"]), { ...named, "x-pf-origin": "ai" })).toEqual({
      status: 403,
      code: "auth.person_required",
    });
    expect(
      await call({ ...rule, actor: Actor.MEMBER }, service("tips", ["a"]), { ...named, "x-pf-origin": "ai" }),
    ).toEqual({ status: 403, code: "auth.person_required" });
    // Without the option the rule admits it and the handler decides what AI output for a person means (authorship).
    const open = await call({ ...rule, noAiOrigin: false }, service("tips", ["a"]), { ...named, "x-pf-origin": "ai" });
    expect(open.caller?.principal.origin).toBe("ai");
  });
});

describe("alternative rules on one RPC", () => {
  // Moderate as staff (internal), or write one's own (first-party): community's DELETE /comments/{id}.
  const moderateOrOwn: Rule = {
    name: "moderate",
    visibility: Visibility.INTERNAL,
    capabilities: ["c.moderate"],
    actor: Actor.STAFF,
    actingSubject: true,
    alternatives: [{ name: "own", visibility: Visibility.FIRST_PARTY, capabilities: ["c.write"], actor: Actor.PERSON }],
  };

  it("reads its rules main-first", () => {
    expect(routeAccessOf(rpcWith(moderateOrOwn)).rules.map((rule) => rule.name)).toEqual(["moderate", "own"]);
    expect(routeAccessOf(rpcWith(moderateOrOwn)).audience).toBe("pf");
  });

  it("tells the handler which rule admitted the caller", async () => {
    expect((await call(moderateOrOwn, service("tips", ["c.moderate"]))).admitted).toEqual({
      admittedBy: "moderate",
      person: undefined,
      staff: "svc:tips",
    });
    const vouched = await call(moderateOrOwn, service("tips", ["c.moderate"]), {
      "x-pf-subject": "usr_p1",
      "x-pf-staff": "1",
    });
    expect(vouched.admitted).toEqual({ admittedBy: "moderate", person: "usr_p1", staff: "usr_p1" });
    expect((await call(moderateOrOwn, user)).admitted).toEqual({
      admittedBy: "own",
      person: "usr_u1",
      staff: undefined,
    });
    expect(
      (await call(moderateOrOwn, service("tips", ["c.write"]), { "x-pf-subject": "usr_p1" })).caller?.admittedBy,
    ).toBe("own");
  });

  it("gives a service holding both capabilities, acting for a person it does not vouch as staff, the owner rule: never moderation", async () => {
    const both = service("tips", ["c.moderate", "c.write"]);
    const answer = await call(moderateOrOwn, both, { "x-pf-subject": "usr_p1" });
    expect(answer.admitted).toEqual({ admittedBy: "own", person: "usr_p1", staff: undefined });
    expect((await call(moderateOrOwn, both, { "x-pf-subject": "usr_p1", "x-pf-staff": "1" })).caller?.admittedBy).toBe(
      "moderate",
    );
  });

  it("answers the last rule's refusal when every rule refuses", async () => {
    expect(await call(moderateOrOwn, app(["c.moderate", "c.write"]))).toEqual({
      status: 403,
      code: "auth.first_party_only",
    });
    const missing = await refusalOf(moderateOrOwn, service("tips", ["c.other"]));
    expect(missing).toMatchObject({
      status: 403,
      code: "auth.capability_missing",
      detail: expect.stringContaining("c.write"),
    });
    expect(await call(moderateOrOwn, service("tips", ["c.moderate"]), { "x-pf-subject": "usr_p1" })).toEqual({
      status: 403,
      code: "auth.capability_missing",
    });
    expect(await call(moderateOrOwn, service("tips", ["c.write"]))).toEqual({
      status: 403,
      code: "auth.person_required",
    });
    expect(await call(moderateOrOwn)).toEqual({ status: 401, code: "auth.required" });
  });

  it("lets an anonymous caller in when any rule allows it, naming that rule", async () => {
    const rule: Rule = {
      name: "full",
      visibility: Visibility.FIRST_PARTY,
      capabilities: ["s.read"],
      alternatives: [{ name: "public", visibility: Visibility.PUBLIC, anonymous: true, capabilities: ["s.public"] }],
    };
    expect((await call(rule)).caller).toEqual(
      expect.objectContaining({ admittedBy: "public", principal: expect.objectContaining({ kind: "anonymous" }) }),
    );
    expect((await call(rule, user)).caller?.admittedBy).toBe("full");
    expect(await call(rule, undefined, { "x-pf-subject": "usr_p1" })).toEqual({
      status: 403,
      code: "auth.header_refused",
    });
    expect(
      await call({
        ...rule,
        alternatives: [{ name: "public", visibility: Visibility.PUBLIC, capabilities: ["s.public"] }],
      }),
    ).toEqual({ status: 401, code: "auth.required" });
  });
});

describe("capability_unchecked: the capability documented, not checked", () => {
  const rule = { visibility: Visibility.PUBLIC, capabilities: ["s.read"], capabilityUnchecked: true };

  it("admits any valid token, whatever it holds", async () => {
    expect((await call(rule, service("tips"))).principal?.service).toBe("tips");
    expect((await call(rule, app([]))).principal?.appId).toBe("a1");
    expect((await call(rule, user)).principal?.sub).toBe("usr_u1");
    expect((await call({ ...rule, allCapabilities: ["s.a", "s.b"] }, app(["s.a"]))).principal?.kind).toBe("app");
  });

  it("takes no token only where anonymous use is allowed, and never a token that does not verify", async () => {
    expect(await call(rule)).toEqual({ status: 401, code: "auth.required" });
    expect((await call({ ...rule, anonymous: true })).principal?.kind).toBe("anonymous");
    const token = forged(await mintToken(keys, service("tips")));
    await expect(admission.admit(rpcWith(rule), new Headers({ authorization: `Bearer ${token}` }))).rejects.toThrow(
      /not valid/,
    );
  });

  it("still keeps the visibility: an internal route stays closed to apps", async () => {
    expect(await call({ ...rule, visibility: Visibility.INTERNAL }, app([], true))).toEqual({
      status: 403,
      code: "auth.internal_only",
    });
  });
});

describe("token audience", () => {
  const rule = { visibility: Visibility.PARTNER, capabilities: ["a"] };

  it("a service declaring its own audience takes tokens for it and refuses the platform's (401 auth.wrong_audience)", async () => {
    expect(routeAccessOf(rpcWith(rule, "media")).audience).toBe("media");
    expect((await call(rule, service("tips", ["a"], { aud: "media" }), {}, "media")).principal?.service).toBe("tips");
    expect(await call(rule, service("tips", ["a"]), {}, "media")).toEqual({ status: 401, code: "auth.wrong_audience" });
  });

  it("every other service refuses a token minted for another audience", async () => {
    expect(await call(rule, service("tips", ["a"], { aud: "media" }))).toEqual({
      status: 401,
      code: "auth.wrong_audience",
    });
    expect(await call(rule, { ...user, aud: "media" })).toEqual({ status: 401, code: "auth.wrong_audience" });
    expect((await call(rule, service("tips", ["a"], { aud: "pf" }))).principal?.service).toBe("tips");
  });

  it("a token minted for several audiences is taken wherever one of them is the route's", async () => {
    const both = service("tips", ["a"], { aud: ["media", "pf"] });
    expect((await call(rule, both, {}, "media")).principal?.service).toBe("tips");
    expect((await call(rule, both)).principal?.service).toBe("tips");
    expect(await call(rule, both, {}, "codes")).toEqual({ status: 401, code: "auth.wrong_audience" });
  });

  it("minting refuses a token no route would take: no audience, or a name that is not one", async () => {
    for (const aud of [[], "", "Codes", "a b"]) {
      await expect(mintToken(keys, service("tips", ["a"], { aud })), JSON.stringify(aud)).rejects.toThrow(/aud/);
    }
  });
});
