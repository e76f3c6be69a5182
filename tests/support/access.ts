import { getOption, type DescMethod, type DescService } from "@bufbuild/protobuf";
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { http as httpOption } from "../../gen/google/api/annotations_pb.js";
import { access, Visibility, type Access } from "../../gen/pf/v1/options_pb.js";
import type { TokenClaims } from "../../services/kit/auth/tokens.js";
import type { TestPlatform } from "./platform.js";

/** One valid call of a route; the refusal tests vary only the caller. */
export interface RouteCall {
  method: string;
  path: string;
  body?: unknown;
}

export interface Route {
  name: string;
  method: DescMethod;
  rule: Access;
}

export function routesOf(...services: DescService[]): Route[] {
  return services.flatMap((service) => service.methods.map((method) => ({ name: method.localName, method, rule: getOption(method, access) })));
}

/** Capabilities that satisfy a rule: one of its any-of list, or all of its all-of list. */
export function capabilitiesOf(rule: Access): string[] {
  return rule.capabilities.length > 0 ? [rule.capabilities[0]] : rule.allCapabilities;
}

/** The documented rows of one service in the spec's routes.tsv (undefined in a clone without shared/ beside it; CI always has it). */
export async function documentedRoutes(service: string): Promise<string[][] | undefined> {
  const tsv = await readFile(new URL("../../../shared/spec/routes.tsv", import.meta.url), "utf8").catch((error: unknown) => {
    if (process.env.CI === "true") throw error;
    return undefined;
  });
  return tsv?.split("\n").filter((line) => line.startsWith(`${service}\t`)).map((line) => line.split("\t"));
}

/** A route as bound: verb, path template, capabilities as the spec writes them, visibility. */
export function bindingOf(route: Route) {
  const rule = getOption(route.method, httpOption);
  const verb = rule.pattern.case?.toUpperCase();
  const template = rule.pattern.value as string;
  const caps = route.rule.capabilities.length > 0 ? route.rule.capabilities.join(",") : route.rule.allCapabilities.join(" and ");
  return { verb, template, caps, visibility: Visibility[route.rule.visibility].toLowerCase().replace("_", "-") };
}

/**
 * The refusals every route owes: no token, a forged token, a missing
 * capability, apps, people and the X-PF-* headers from whoever may not send
 * them, acting-subject headers where the route acts for nobody, mods.
 */
export function describeRefusals(t: TestPlatform, routes: Route[], calls: Record<string, RouteCall>, extraClaims: Partial<TokenClaims> = {}) {
  describe.each(routes.filter((route) => !route.rule.anonymous))("$name refuses", ({ name, rule }) => {
    const call = calls[name];
    const send = (token?: string, headers?: Record<string, string>) => t.http(call.method, call.path, { token, body: call.body, headers });
    const caps = capabilitiesOf(rule);
    const service = (claims: Partial<TokenClaims> = {}) => t.token({ kind: "service", svc: "tips", caps, ...extraClaims, ...claims });

    it("a call without a token (401 auth.required, problem+json)", async () => {
      const answer = await send();
      expect(answer.status).toBe(401);
      expect(answer.headers.get("content-type")).toContain("application/problem+json");
      expect(answer.body).toMatchObject({ status: 401, code: "auth.required" });
      expect(answer.headers.get("www-authenticate")).toBe("Bearer");
    });

    it("a forged token (401 auth.invalid)", async () => {
      const answer = await send(`${(await service()).slice(0, -4)}AAAA`);
      expect(answer.status).toBe(401);
      expect(answer.body.code).toBe("auth.invalid");
      expect(answer.headers.get("www-authenticate")).toBe('Bearer error="invalid_token"');
    });

    it("a service token without the capability (403 auth.capability_missing)", async () => {
      const answer = await send(await service({ caps: ["other.capability"] }));
      expect(answer.status).toBe(403);
      expect(answer.body.code).toBe("auth.capability_missing");
    });

    it("a third-party app token even with the capability (403)", async () => {
      const answer = await send(await t.token({ kind: "app", app_id: "app1", caps }));
      expect(answer.status).toBe(403);
      expect(["auth.internal_only", "auth.first_party_only", "auth.never_to_apps"]).toContain(answer.body.code);
    });

    it("a first-party app token: refused on internal and never-to-apps routes, let through elsewhere", async () => {
      const answer = await send(await t.token({ kind: "app", app_id: "app1", caps, fp: true }));
      if (rule.visibility === Visibility.INTERNAL) expect(answer.body).toMatchObject({ status: 403, code: "auth.internal_only" });
      else if (rule.neverToApps) expect(answer.body).toMatchObject({ status: 403, code: "auth.never_to_apps" });
      // Let through: whatever the service answers, enforcement did not refuse it, and nothing failed
      // (a route acting for a person may answer auth.person_required: an app names no person).
      else {
        expect(String(answer.body?.code ?? "")).not.toMatch(/^auth\.(?!person_required$)/);
        expect(answer.status).toBeLessThan(500);
      }
    });

    it("a user token: refused on internal and no-people routes, let through to ownership checks elsewhere", async () => {
      const answer = await send(await t.token({ kind: "user", sub: "usr_a1" }));
      if (rule.visibility === Visibility.INTERNAL) expect(answer.body).toMatchObject({ status: 403, code: "auth.internal_only" });
      else if (rule.noPeople) expect(answer.body).toMatchObject({ status: 403, code: "auth.people_refused" });
      // People are checked by the service's ownership rules, not by capability.
      else expect(String(answer.body?.code ?? "")).not.toMatch(/^auth\./);
    });

    it("X-PF-Subject, X-PF-Staff or X-PF-Origin sent with a non-service token (403)", async () => {
      const user = await t.token({ kind: "user", sub: "usr_a1" });
      const app = await t.token({ kind: "app", app_id: "app1", caps, fp: true });
      const userCode = rule.visibility === Visibility.INTERNAL ? "auth.internal_only" : rule.noPeople ? "auth.people_refused" : "auth.header_refused";
      const appCode = rule.visibility === Visibility.INTERNAL ? "auth.internal_only" : rule.neverToApps ? "auth.never_to_apps" : "auth.header_refused";
      for (const [token, headers, code] of [
        [user, { "x-pf-subject": "usr_b1" }, userCode],
        [user, { "x-pf-staff": "1" }, userCode],
        [app, { "x-pf-subject": "usr_b1" }, appCode],
        [app, { "x-pf-staff": "1" }, appCode],
        [user, { "x-pf-origin": "ai" }, userCode],
        [app, { "x-pf-origin": "ai" }, appCode],
      ] as const) {
        const answer = await send(token, headers);
        expect(answer.status).toBe(403);
        expect(answer.body.code).toBe(code);
      }
    });

    // Routes that act for a person honour X-PF-Subject from services; the others refuse it.
    if (!rule.actingSubject) {
      it("X-PF-Subject from a service where the route acts for nobody (400 auth.acting_subject_refused)", async () => {
        const answer = await send(await service(), { "x-pf-subject": "usr_b1" });
        expect(answer.status).toBe(400);
        expect(answer.body.code).toBe("auth.acting_subject_refused");
      });
    }

    it("a mod's token where the spec says never to mods (403 auth.never_to_mods)", async () => {
      const answer = await send(await service({ svc: "games", mod: "mod_1" }));
      if (rule.neverToMods) expect(answer.body).toMatchObject({ status: 403, code: "auth.never_to_mods" });
      else expect(answer.body?.code).not.toBe("auth.never_to_mods");
    });
  });
}

/** Unknown fields and query parameters are refused by name, never answered 500. */
export function describeMalformedInput(t: TestPlatform, routes: Route[], calls: Record<string, RouteCall>, extraClaims: Partial<TokenClaims> = {}) {
  describe.each(routes)("$name refuses malformed input", ({ name, rule }) => {
    const call = calls[name];
    it("an unknown field or query parameter (400 request.invalid naming it, never 500)", async () => {
      const token = await t.token({ kind: "service", svc: "tips", caps: capabilitiesOf(rule), ...extraClaims });
      const answer = call.body === undefined
        ? await t.http(call.method, `${call.path}${call.path.includes("?") ? "&" : "?"}bogus=1`, { token })
        : await t.http(call.method, call.path, { token, body: { ...(call.body as object), bogus: 1 } });
      expect(answer.status).toBe(400);
      expect(answer.body.code).toBe("request.invalid");
      expect(answer.body.detail).toContain("bogus");
    });
  });
}
