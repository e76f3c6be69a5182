import { getOption, type DescMethod, type DescService } from "@bufbuild/protobuf";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { http as httpOption } from "../../gen/google/api/annotations_pb.js";
import {
  Actor,
  relations as relationsOption,
  Visibility,
  type Access,
  type Relation,
} from "../../gen/pf/v1/options_pb.js";
import { admitsAnonymous, routeAccessOf } from "../../services/kit/auth/enforce.js";
import { AUDIENCE, type TokenClaims } from "../../services/kit/auth/tokens.js";
import { modules } from "../../platform/registry.js";
import type { TestPlatform } from "./platform.js";
import { itWith, need } from "./skips.js";
import { forged } from "./callers.js";

/** One valid call of a route; the refusal tests vary only the caller. */
export interface RouteCall {
  method: string;
  path: string;
  /** JSON, or the raw body (a string) of a route that takes other bytes (an upload), with its `headers`. */
  body?: unknown;
  /** The call's own headers: an upload's content type. */
  headers?: Record<string, string>;
  /**
   * The role the object the call names holds in each `of_object` relation its rules name, by relation name (a
   * tool's auth class: `{ tool: "signed_in" }`): who is admitted follows from it, whoever calls.
   */
  roles?: Readonly<Record<string, string>>;
}

export interface Route {
  name: string;
  method: DescMethod;
  /** The main rule. */
  rule: Access;
  /** Every rule, in the order enforcement tries them: the main rule, then its alternatives. */
  rules: readonly Access[];
  /** The audience the route's tokens must carry. */
  audience: string;
  /** Whether a service may name the person it acts for (X-PF-Subject): a rule is first-party or acts for a person. */
  actsForPeople: boolean;
  /** The relations its proto service declares (`pf.v1.relations`), which its rules' `relation` name. */
  relations: readonly Relation[];
}

export function routesOf(...services: DescService[]): Route[] {
  return services.flatMap((service) =>
    service.methods.map((method) => {
      const { rules, audience } = routeAccessOf(method);
      return {
        name: method.localName,
        method,
        rule: rules[0],
        rules,
        audience,
        actsForPeople: rules.some(takesActingSubject),
        relations: getOption(service, relationsOption),
      };
    }),
  );
}

/** Capabilities that satisfy a rule: one of its any-of list, or all of its all-of list. */
export function capabilitiesOf(rule: Access): string[] {
  return rule.capabilities.length > 0 ? [rule.capabilities[0]] : rule.allCapabilities;
}

/** Capabilities that satisfy every rule of a route. */
export function routeCapabilities(route: Route): string[] {
  return [...new Set(route.rules.flatMap(capabilitiesOf))];
}

/** A service token every rule of a route lets in by its token (the named service where one is required). */
export function serviceClaims(route: Route, claims: Partial<TokenClaims> = {}): TokenClaims {
  const svc = route.rules.find((rule) => rule.onlyServices.length > 0)?.onlyServices[0] ?? "tips";
  return { kind: "service", svc, caps: routeCapabilities(route), aud: route.audience, ...claims };
}

const SPEC_ROUTES = new URL("../../../shared/spec/routes.tsv", import.meta.url);

/** The spec's routes.tsv: beside every CI checkout, not always beside a clone. */
export const SPEC = need(
  existsSync(fileURLToPath(SPEC_ROUTES)),
  "the spec folder ../shared/spec is not beside this clone",
);

/** The documented rows of one service in the spec's routes.tsv; read them in `itWithSpec`, which skips (outside CI) without it. */
export async function documentedRoutes(service: string): Promise<string[][]> {
  const tsv = await readFile(SPEC_ROUTES, "utf8").catch((error: unknown) => {
    throw new Error(`routes.tsv cannot be read: ${SPEC.reason}`, { cause: error });
  });
  return tsv
    .split("\n")
    .filter((line) => line.startsWith(`${service}\t`))
    .map((line) => line.split("\t"));
}

/** A parity check against the spec's routes of one service: skipped, saying why, where the spec is not beside the clone. */
export function itWithSpec(name: string, service: string, test: (documented: string[][]) => unknown): void {
  itWith(SPEC, name, async () => test(await documentedRoutes(service)));
}

/** A route as bound: verb, path template, capabilities as the spec writes them, visibility. */
export function bindingOf(route: Route) {
  const rule = getOption(route.method, httpOption);
  const verb = rule.pattern.case?.toUpperCase();
  const template = rule.pattern.value as string;
  const caps =
    route.rule.capabilities.length > 0 ? route.rule.capabilities.join(",") : route.rule.allCapabilities.join(" and ");
  return { verb, template, caps, visibility: Visibility[route.rule.visibility].toLowerCase().replace("_", "-") };
}

/** A caller the matrix sends: its token's claims (none: anonymous) and its X-PF-* headers. */
export interface Caller {
  claims?: TokenClaims;
  headers?: Record<string, string>;
}

/** Refusals only enforcement answers: a call answered one was not let through to its service. */
const ENFORCEMENT_ONLY = [
  "auth.required",
  "auth.invalid",
  "auth.wrong_audience",
  "auth.no_access_rule",
  "auth.capability_missing",
  "auth.separate_grant",
  "auth.internal_only",
  "auth.first_party_only",
  "auth.never_to_apps",
  "auth.never_to_mods",
  "auth.service_not_allowed",
  "auth.people_refused",
  "auth.header_refused",
  "auth.acting_subject_refused",
  "auth.ai_origin_required",
];

/** The X-PF-* headers that name a person or vouch for one: never from a mod. */
const PERSON_HEADERS = ["x-pf-subject", "x-pf-staff", "x-pf-groups", "x-pf-entitlements"];

/** Whether a rule lets a service name the person it acts for: first-party routes always, others where declared. */
function takesActingSubject(rule: Access): boolean {
  return rule.actingSubject || rule.visibility === Visibility.FIRST_PARTY;
}

function opensToAnonymous(route: Route): boolean {
  return route.rules.some(admitsAnonymous);
}

/** Whether a route's rules name a relation that is a class of the scoped object (`of_object`: a tool's auth class). */
function namesObjectClass(route: Route): boolean {
  return route.rules.some((rule) => route.relations.find((each) => each.name === rule.relation?.name)?.ofObject);
}

/** The capability refusal a token meets under a rule, if any: a mod's always needs one the rule names. */
function capabilityRefusal(rule: Access, caps: readonly string[], mod: boolean): string | undefined {
  if (mod && rule.capabilities.length === 0 && rule.allCapabilities.length === 0) return "auth.never_to_mods";
  if (rule.capabilityUnchecked && !mod) return undefined;
  const anyOf = rule.capabilities.length === 0 || rule.capabilities.some((cap) => caps.includes(cap));
  if (!anyOf || !rule.allCapabilities.every((cap) => caps.includes(cap))) return "auth.capability_missing";
  if (rule.separateGrant && caps.some((cap) => !rule.capabilities.includes(cap))) return "auth.separate_grant";
  return undefined;
}

/**
 * The refusal one rule answers a token's caller, as the spec words it, or
 * undefined where the rule admits it: visibility and the token's kind first,
 * then the X-PF-* headers, then whom the call acts for.
 */
export function refusalByRule(
  rule: Access,
  claims: TokenClaims,
  headers: Record<string, string> = {},
): string | undefined {
  const internal = rule.visibility === Visibility.INTERNAL;
  const caps = claims.caps ?? [];
  // A token carrying `mod` is a mod: capabilities required, no person, no staff.
  const mod = claims.mod !== undefined;
  if (rule.visibility === Visibility.UNSPECIFIED) return "auth.no_access_rule";
  // Internal is "service-to-service only; never granted to apps or mods".
  if (mod && (internal || rule.neverToMods)) return "auth.never_to_mods";
  if (claims.kind === "user") {
    if (internal) return "auth.internal_only";
    if (rule.noPeople) return "auth.people_refused";
    const refused = mod ? capabilityRefusal(rule, caps, mod) : undefined;
    if (refused) return refused;
  } else if (claims.kind === "app") {
    if (internal) return "auth.internal_only";
    if (rule.neverToApps) return "auth.never_to_apps";
    if (rule.visibility === Visibility.FIRST_PARTY && !claims.fp) return "auth.first_party_only";
    const refused = capabilityRefusal(rule, caps, mod);
    if (refused) return refused;
  } else {
    if (rule.onlyServices.length > 0 && !rule.onlyServices.includes(claims.svc ?? ""))
      return "auth.service_not_allowed";
    const refused = capabilityRefusal(rule, caps, mod);
    if (refused) return refused;
  }
  // The X-PF-* headers are what services tell each other (X-PF-Origin also from apps where the route says so).
  const fromApp = (name: string) => claims.kind === "app" && rule.originFromApps && name === "x-pf-origin";
  if (claims.kind !== "service" && Object.keys(headers).some((name) => name.startsWith("x-pf-") && !fromApp(name))) {
    return "auth.header_refused";
  }
  // A mod never acts for a person: the headers naming one (or vouching staff) are refused from it.
  if (mod && PERSON_HEADERS.some((name) => headers[name] !== undefined)) return "auth.never_to_mods";
  const subject = headers["x-pf-subject"];
  if (subject !== undefined && !takesActingSubject(rule)) return "auth.acting_subject_refused";
  const person = mod ? undefined : claims.kind === "user" ? claims.sub : subject;
  // AI output is never attributed to a person: a person's own act refuses it (no_ai_origin).
  const ownAct = () => (rule.noAiOrigin && headers["x-pf-origin"] === "ai" ? "auth.person_required" : undefined);
  // Staff: a service (or, but for platform staff, an app) acting for nobody, or a service vouching for the person.
  const vouched = !mod && claims.kind === "service" && (subject === undefined || headers["x-pf-staff"] === "1");
  switch (rule.actor) {
    case Actor.PERSON:
      return person ? ownAct() : "auth.person_required";
    case Actor.MEMBER:
      return person?.startsWith("usr_") ? ownAct() : "auth.member_required";
    case Actor.STAFF:
      return vouched || (claims.kind === "app" && !mod) ? undefined : "auth.staff_required";
    case Actor.PLATFORM_STAFF:
      return vouched ? undefined : "auth.staff_required";
    case Actor.AI_OUTPUT:
      return person === undefined && headers["x-pf-origin"] === "ai" ? undefined : "auth.ai_origin_required";
    default:
      return undefined;
  }
}

/**
 * The person the matrix sends who holds no relation: the people it sends
 * otherwise (usr_a1, usr_b1) hold every relation their service declares (its
 * tests put them on its lists and in its roles), so their calls reach the handler.
 */
export const OUTSIDER = "usr_z9";

/**
 * What a service answers someone outside a relation where that is not the relation's refusal, by relation name: the
 * scoped object's 404 (host's `project`: existence not confirmed to who holds no role), per route.
 */
export type Outsiders = Readonly<Record<string, (route: Route) => { status: number; code: string }>>;

/**
 * The refusal of a rule's relation (`relation`) to a caller its token rules
 * admit (no claims: an anonymous caller), as the kit's Relations answer it, or undefined where it holds:
 * never AI output (naming a person, auth.person_required, unless the relation
 * is `held_by_ai_output`: then as that person) nor a mod; a
 * person unless they are the OUTSIDER; a service or first-party app acting
 * for nobody where the relation says so; an app acting for nobody where the relation is `held_by_apps` is asked
 * as itself, and the matrix's app1 is in no service's relation, so it stands outside as the OUTSIDER does. Someone
 * outside is answered the relation's refusal, or what `outsiders` says. A relation `of_object` is the class of
 * the object the call names (`roles`, from RouteCall.roles), the same for every caller, mods and AI output
 * included: it holds where the rule takes that role; else an anonymous caller is 401 auth.required (signing in may
 * admit it), AI output naming a person auth.person_required, anyone else the refusal. A relation required only
 * when the request sets a field (`when_set`) is left to the service's own tests.
 */
export function relationRefusal(
  route: Route,
  rule: Access,
  claims: TokenClaims | undefined,
  headers: Record<string, string> = {},
  outsiders: Outsiders = {},
  roles: Readonly<Record<string, string>> = {},
) {
  if (rule.relation === undefined || rule.relation.whenSet.length > 0) return undefined;
  const declared = route.relations.find((each) => each.name === rule.relation!.name);
  if (!declared) throw new Error(`${route.name}: relation "${rule.relation.name}" is not declared on its service`);
  const mod = claims?.mod !== undefined;
  const person = mod ? undefined : claims?.kind === "user" ? claims.sub : headers["x-pf-subject"];
  if (declared.ofObject) {
    const role = roles[declared.name];
    if (role === undefined)
      throw new Error(`${route.name}: its call gives no role of the object it names in "${declared.name}" (roles)`);
    if (rule.relation.roles.length === 0 || rule.relation.roles.includes(role)) return undefined;
    if (claims === undefined) return "auth.required";
    if (person !== undefined && headers["x-pf-origin"] === "ai" && !declared.heldByAiOutput)
      return "auth.person_required";
    return declared.refusal;
  }
  // An anonymous caller is no person, nor the platform acting for nobody.
  if (claims === undefined) return declared.refusal;
  if (headers["x-pf-origin"] === "ai") {
    if (person === undefined) return declared.refusal;
    if (!declared.heldByAiOutput) return "auth.person_required";
  }
  if (mod) return declared.refusal;
  const outside = outsiders[declared.name]?.(route).code ?? declared.refusal;
  if (person !== undefined) return person === OUTSIDER ? outside : undefined;
  if (declared.heldByApps && claims.kind === "app") return outside;
  const platform = claims.kind === "service" || (claims.kind === "app" && claims.fp === true);
  return declared.actingForNobody && platform ? undefined : declared.refusal;
}

/**
 * What enforcement answers a caller of a route: admitted (undefined) when any
 * of its rules admits it, otherwise the refusal of its last rule. Where rules
 * admitting the caller require a relation it does not hold, the kit
 * tries them in order up to the first without one: the last one's relation refusal.
 * An anonymous caller is admitted by the rules open to anonymous callers, and so refused by their relations.
 * `roles`: the role of the object the call names in each `of_object` relation (RouteCall.roles).
 */
export function expectedRefusal(
  route: Route,
  { claims, headers = {} }: Caller,
  outsiders: Outsiders = {},
  roles: Readonly<Record<string, string>> = {},
): string | undefined {
  const pfHeaders = Object.keys(headers).some((name) => name.startsWith("x-pf-"));
  let admitting: Access[];
  if (!claims) {
    if (!opensToAnonymous(route)) return "auth.required";
    if (pfHeaders) return "auth.header_refused";
    admitting = route.rules.filter(admitsAnonymous);
  } else {
    if ((claims.aud ?? AUDIENCE) !== route.audience) return "auth.wrong_audience";
    const refusals = route.rules.map((rule) => refusalByRule(rule, claims, headers));
    admitting = route.rules.filter((_rule, at) => refusals[at] === undefined);
    if (admitting.length === 0) return refusals.at(-1);
  }
  let refusal: string | undefined;
  for (const rule of admitting) {
    refusal = relationRefusal(route, rule, claims, headers, outsiders, roles);
    if (refusal === undefined) return undefined;
  }
  return refusal;
}

/** The HTTP status of an enforcement refusal. */
export function statusOf(code: string): number {
  if (code === "auth.required" || code === "auth.invalid" || code === "auth.wrong_audience") return 401;
  return code === "auth.acting_subject_refused" ? 400 : 403;
}

/**
 * A caller the route admits (for checks that must get past enforcement): a service, acting for a person where it
 * must. `roles`: the role of the object the call names in each `of_object` relation (RouteCall.roles).
 */
export function admittedCaller(
  route: Route,
  extraClaims: Partial<TokenClaims> = {},
  roles: Readonly<Record<string, string>> = {},
): Caller {
  const service = serviceClaims(route, extraClaims);
  const candidates: Caller[] = [
    { claims: service },
    { claims: service, headers: { "x-pf-subject": "usr_a1" } },
    { claims: { kind: "user", sub: "usr_a1", aud: route.audience } },
    { claims: service, headers: { "x-pf-subject": "usr_a1", "x-pf-staff": "1" } },
    // Routes only AI output reaches (ACTOR_AI_OUTPUT alone, reviews' summary proposals).
    { claims: service, headers: { "x-pf-origin": "ai" } },
  ];
  const found = candidates.find((caller) => expectedRefusal(route, caller, {}, roles) === undefined);
  if (!found) throw new Error(`${route.name}: no caller of the matrix is admitted; give it one in its service's tests`);
  return found;
}

/**
 * The refusals every route owes: no token (whatever the request's shape), a
 * forged token or one for another audience, a missing capability, apps,
 * people and the X-PF-* headers from whoever may not send them, acting-subject
 * headers where no rule acts for a person, mods on internal and never-to-mods
 * routes, and callers the route's declared actor does not admit. Where a route
 * has alternative rules, a caller is let through when any rule admits it, and
 * otherwise answered the last rule's refusal. `outsiders`: what the service answers
 * someone outside a relation where that is not the relation's refusal (`relationRefusal`).
 * Routes open to anonymous callers are left out, but those whose rules name a class of the object the call names
 * (`of_object`: RouteCall.roles), which admits or refuses every caller, anonymous ones included.
 */
export function describeRefusals(
  t: TestPlatform,
  routes: Route[],
  calls: Record<string, RouteCall>,
  extraClaims: Partial<TokenClaims> = {},
  outsiders: Outsiders = {},
) {
  const refusing = routes.filter((route) => !opensToAnonymous(route) || namesObjectClass(route));
  describe.each(refusing)("$name refuses", (route) => {
    const call = calls[route.name];
    const roles = call.roles ?? {};
    const send = (token?: string, headers?: Record<string, string>) =>
      t.http(call.method, call.path, { token, body: call.body, headers: { ...call.headers, ...headers } });
    const caps = routeCapabilities(route);
    const aud = route.audience;
    const service = (claims: Partial<TokenClaims> = {}) => serviceClaims(route, { ...extraClaims, ...claims });
    const fpApp: TokenClaims = { kind: "app", app_id: "app1", caps, fp: true, aud };
    const user: TokenClaims = { kind: "user", sub: "usr_a1", aud };
    const actors = route.rules.map((rule) => rule.actor);
    const staff = actors.includes(Actor.STAFF) || actors.includes(Actor.PLATFORM_STAFF);

    /**
     * Sends the caller and checks enforcement's answer: its refusal, or let
     * through to the service (no auth.* code, no 5xx). With `ownership`, the
     * service may still refuse the caller by its own lists (an editor or staff
     * list: auth.editor_required…), never with a refusal only enforcement gives.
     */
    const expectAnswer = async (caller: Caller, { ownership = false } = {}) => {
      const answer = await send(await t.token(caller.claims!), caller.headers);
      const refusal = expectedRefusal(route, caller, outsiders, roles);
      const who = `${caller.claims!.kind} ${JSON.stringify(caller.headers ?? {})}`;
      const outside = route.rules
        .map((rule) => rule.relation && outsiders[rule.relation.name]?.(route))
        .find((answer) => answer?.code === refusal);
      if (refusal)
        expect(answer.body, who).toMatchObject({ status: outside?.status ?? statusOf(refusal), code: refusal });
      else {
        const code = String(answer.body?.code ?? "");
        if (ownership) expect(ENFORCEMENT_ONLY, who).not.toContain(code);
        else expect(code, who).not.toMatch(/^auth\./);
        expect(answer.status, who).toBeLessThan(500);
      }
    };

    const anonymous = expectedRefusal(route, {}, outsiders, roles);
    it(`a call without a token (${anonymous ? `${statusOf(anonymous)} ${anonymous}, problem+json` : "let through: the object it names takes anonymous callers"})`, async () => {
      const answer = await send();
      if (!anonymous) {
        expect(String(answer.body?.code ?? "")).not.toMatch(/^auth\./);
        expect(answer.status).toBeLessThan(500);
        return;
      }
      expect(answer.status).toBe(statusOf(anonymous));
      expect(answer.headers.get("content-type")).toContain("application/problem+json");
      expect(answer.body).toMatchObject({ status: statusOf(anonymous), code: anonymous });
      if (anonymous === "auth.required") expect(answer.headers.get("www-authenticate")).toBe("Bearer");
    });

    // A relation refuses once the request is read (it is scoped by it): only enforcement's own refusal comes first.
    if (!opensToAnonymous(route))
      it("a call without a token whatever its shape: a malformed body, an unknown field or query parameter (401 before any check)", async () => {
        const query = `${call.path}${call.path.includes("?") ? "&" : "?"}bogus=1`;
        const shapes: [string, string, unknown][] = [["an unknown query parameter", query, call.body]];
        // A body on a route that takes none is a shape check too (fetch sends no body with GET or HEAD).
        if (call.method !== "GET" && call.method !== "HEAD") shapes.push(["a malformed body", call.path, "{not json"]);
        if (typeof call.body === "object")
          shapes.push(["an unknown field", call.path, { ...(call.body as object), bogus: 1 }]);
        for (const [what, path, body] of shapes) {
          const answer = await t.http(call.method, path, { body });
          expect(answer.body, what).toMatchObject({ status: 401, code: "auth.required" });
          expect(answer.headers.get("www-authenticate"), what).toBe("Bearer");
        }
      });

    it("a forged token (401 auth.invalid)", async () => {
      const answer = await send(forged(await t.token(service())));
      expect(answer.status).toBe(401);
      expect(answer.body.code).toBe("auth.invalid");
      expect(answer.headers.get("www-authenticate")).toBe('Bearer error="invalid_token"');
    });

    it("a token minted for another audience (401 auth.wrong_audience)", async () => {
      const answer = await send(await t.token(service({ aud: aud === "pf" ? "elsewhere" : "pf" })));
      expect(answer.body).toMatchObject({ status: 401, code: "auth.wrong_audience" });
    });

    it("a service token without the capability (403 auth.capability_missing where every rule checks one)", async () => {
      await expectAnswer({ claims: service({ caps: ["other.capability"] }) });
    });

    it("a third-party app token even with the capability", async () => {
      await expectAnswer({ claims: { ...fpApp, fp: false } });
    });

    it("a first-party app token: refused on internal, never-to-apps and platform-staff routes, and where a person is needed", async () => {
      await expectAnswer({ claims: fpApp });
    });

    it("a user token: refused on internal, no-people and staff routes, let through to ownership checks elsewhere", async () => {
      await expectAnswer({ claims: user });
    });

    it("X-PF-Subject, X-PF-Staff or X-PF-Origin sent with a non-service token (403)", async () => {
      for (const claims of [user, fpApp]) {
        const sent: Record<string, string>[] = [
          { "x-pf-subject": "usr_b1" },
          { "x-pf-staff": "1" },
          { "x-pf-origin": "ai" },
        ];
        for (const headers of sent) await expectAnswer({ claims, headers });
      }
    });

    // First-party routes and those acting for a person honour X-PF-Subject from services; the others refuse it.
    it(`X-PF-Subject from a service: ${route.actsForPeople ? "names the person the call acts for" : "400 auth.acting_subject_refused"}`, async () => {
      await expectAnswer({ claims: service(), headers: { "x-pf-subject": "usr_b1" } });
    });

    it("a mod's token: refused on internal and never-to-mods routes (403 auth.never_to_mods)", async () => {
      await expectAnswer({ claims: service({ mod: "mod_1" }) }, { ownership: true });
    });

    // A token carrying `mod` is a mod whatever its kind: it needs the capability and acts for no person and as no staff.
    // Let through, the service may still refuse it by its own lists: a mod is on none.
    it("a mod's user token: needs the capability, and is never the person it names (auth.person_required, auth.staff_required)", async () => {
      await expectAnswer({ claims: { ...user, mod: "mod_1" } }, { ownership: true });
      await expectAnswer({ claims: { ...user, mod: "mod_1", caps } }, { ownership: true });
    });

    it("a mod's first-party app token: never staff, refused where never to mods", async () => {
      await expectAnswer({ claims: { ...fpApp, mod: "mod_1" } }, { ownership: true });
    });

    it("a mod's service token naming a person or vouching staff (403 auth.never_to_mods)", async () => {
      await expectAnswer({ claims: service({ mod: "mod_1" }), headers: { "x-pf-subject": "usr_b1" } });
      await expectAnswer({
        claims: service({ mod: "mod_1" }),
        headers: { "x-pf-subject": "usr_b1", "x-pf-staff": "1" },
      });
    });

    it("AI output naming a person: never that person's own act (403 auth.person_required where no_ai_origin)", async () => {
      const headers = { "x-pf-subject": "usr_b1", "x-pf-origin": "ai" };
      await expectAnswer({ claims: service(), headers }, { ownership: true });
    });

    if (actors.some((actor) => actor !== Actor.UNSPECIFIED)) {
      it("a service token acting for nobody, where the call must act for a person (403 auth.person_required, auth.member_required)", async () => {
        await expectAnswer({ claims: service() });
      });
    }

    const related = route.rules.filter((rule) => rule.relation !== undefined && rule.relation.whenSet.length === 0);
    if (related.length > 0) {
      const names = related.map(
        (rule) =>
          `${rule.relation!.name}${rule.relation!.roles.length > 0 ? ` (${rule.relation!.roles.join(", ")})` : ""}`,
      );
      it(`a person outside its relation ${[...new Set(names)].join(", ")}: refused with the relation's code, or served as another rule admits`, async () => {
        await expectAnswer({ claims: { ...user, sub: OUTSIDER } });
        if (route.actsForPeople) await expectAnswer({ claims: service(), headers: { "x-pf-subject": OUTSIDER } });
      });
    }

    if (staff) {
      it("staff only: a person's own token, or a service acting for a person it does not vouch as staff (403 auth.staff_required)", async () => {
        await expectAnswer({ claims: user });
        await expectAnswer({ claims: service(), headers: { "x-pf-subject": "usr_b1" } });
        await expectAnswer({ claims: service(), headers: { "x-pf-subject": "usr_b1", "x-pf-staff": "1" } });
      });
    }
  });
}

/** Unknown fields and query parameters are refused by name, never answered 500. */
export function describeMalformedInput(
  t: TestPlatform,
  routes: Route[],
  calls: Record<string, RouteCall>,
  extraClaims: Partial<TokenClaims> = {},
) {
  describe.each(routes)("$name refuses malformed input", (route) => {
    const call = calls[route.name];
    it("an unknown field or query parameter (400 request.invalid naming it, never 500)", async () => {
      const caller = admittedCaller(route, extraClaims, call.roles);
      const token = await t.token(caller.claims!);
      const { headers } = caller;
      const answer =
        typeof call.body !== "object"
          ? await t.http(call.method, `${call.path}${call.path.includes("?") ? "&" : "?"}bogus=1`, {
              token,
              body: call.body,
              headers: { ...call.headers, ...headers },
            })
          : await t.http(call.method, call.path, { token, headers, body: { ...(call.body as object), bogus: 1 } });
      expect(answer.status).toBe(400);
      expect(answer.body.code).toBe("request.invalid");
      expect(answer.body.detail).toContain("bogus");
    });
  });
}

/** The proto services a module serves (its declared `protos`, which the host checks against its implementations). */
export function servicesOf(key: string): readonly DescService[] {
  const module = modules.find((m) => m.key === key);
  if (!module) throw new Error(`no service module ${key}`);
  return module.protos;
}
