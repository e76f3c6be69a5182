import { getOption } from "@bufbuild/protobuf";
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { http as httpOption } from "../../gen/google/api/annotations_pb.js";
import { NetworkService } from "../../gen/pf/network/v1/network_pb.js";
import { access, Visibility } from "../../gen/pf/v1/options_pb.js";
import { usePlatform } from "../support/platform.js";

/** One valid call per network route; the refusals below vary only the caller. */
const calls: Record<string, { method: string; path: string; body?: unknown }> = {
  listStaff: { method: "GET", path: "/network/api/v1/staff/moderators" },
  getBlocks: { method: "GET", path: "/network/internal/blocks?subject=usr_a1" },
  creditCoins: { method: "POST", path: "/network/internal/coins/credit", body: { subject: "usr_a1", amount: 5, idempotency_key: "k1" } },
  debitCoins: { method: "POST", path: "/network/internal/coins/debit", body: { subject: "usr_a1", amount: 1 } },
  transferCoins: { method: "POST", path: "/network/internal/coins/transfer", body: { from_subject: "usr_a1", to_subject: "usr_b1", amount: 1 } },
  resolveIdentity: { method: "GET", path: "/network/internal/identity/resolve?subject=usr_a1" },
  resolveIdentityBatch: { method: "POST", path: "/network/internal/identity/resolve-batch", body: { queries: [{ subject: "usr_a1" }] } },
  getGithubToken: { method: "GET", path: "/network/internal/integrations/github-token" },
  getModule: { method: "GET", path: "/network/internal/modules/network/usr_a1" },
  putModule: { method: "PUT", path: "/network/internal/modules/network/usr_a1", body: { record: { a: 1 } } },
  pushNotification: { method: "POST", path: "/network/internal/notifications/mention", body: { recipients: ["usr_a1"], title: "hi" } },
};

const routes = NetworkService.methods.map((method) => ({ name: method.localName, rule: getOption(method, access) }));

const t = usePlatform({ services: ["network"] });

describe("every network route is the spec's route", () => {
  it("matches routes.tsv: method, path, capability and visibility", async () => {
    const tsv = await readFile(new URL("../../../shared/spec/routes.tsv", import.meta.url), "utf8").catch((error: unknown) => {
      if (process.env.CI === "true") throw error;
      return undefined;
    });
    if (tsv === undefined) return; // a clone without shared/ beside it; CI always has it
    const documented = tsv.split("\n").filter((line) => line.startsWith("network\t")).map((line) => line.split("\t"));
    expect(documented).toHaveLength(11);
    const bound = NetworkService.methods.map((method) => {
      const rule = getOption(method, httpOption);
      const [verb, template] = Object.entries({ GET: rule.pattern.case === "get", POST: rule.pattern.case === "post", PUT: rule.pattern.case === "put" })
        .filter(([, on]) => on).map(([verb]) => [verb, rule.pattern.value as string])[0];
      const option = getOption(method, access);
      return { verb, template, caps: option.capabilities.join(","), visibility: Visibility[option.visibility].toLowerCase().replace("_", "-") };
    });
    for (const [, verb, path, cap, visibility] of documented) {
      const template = path.replace(/\?.*$/, "").replace("/*", "/{kind=**}");
      expect(bound, `${verb} ${path}`).toContainEqual({ verb, template, caps: cap, visibility });
    }
  });
});

describe.each(routes)("$name refuses", ({ name, rule }) => {
  const call = calls[name];
  const send = (token?: string, headers?: Record<string, string>) => t.http(call.method, call.path, { token, body: call.body, headers });
  const cap = rule.capabilities[0];

  it("a call without a token (401 auth.required, problem+json)", async () => {
    const answer = await send();
    expect(answer.status).toBe(401);
    expect(answer.headers.get("content-type")).toContain("application/problem+json");
    expect(answer.body).toMatchObject({ status: 401, code: "auth.required" });
    expect(answer.headers.get("www-authenticate")).toBe("Bearer");
  });

  it("a forged token (401 auth.invalid)", async () => {
    const token = await t.token({ kind: "service", svc: "tips", caps: [cap], app_id: "app1" });
    const answer = await send(`${token.slice(0, -4)}AAAA`);
    expect(answer.status).toBe(401);
    expect(answer.body.code).toBe("auth.invalid");
    expect(answer.headers.get("www-authenticate")).toBe('Bearer error="invalid_token"');
  });

  it("a service token without the capability (403 auth.capability_missing)", async () => {
    const answer = await send(await t.token({ kind: "service", svc: "tips", caps: ["network.other"], app_id: "app1" }));
    expect(answer.status).toBe(403);
    expect(answer.body.code).toBe("auth.capability_missing");
  });

  it("a third-party app token even with the capability (403)", async () => {
    const answer = await send(await t.token({ kind: "app", app_id: "app1", caps: [cap] }));
    expect(answer.status).toBe(403);
    expect(["auth.internal_only", "auth.first_party_only", "auth.never_to_apps"]).toContain(answer.body.code);
  });

  it("a first-party app token: refused on internal and never-to-apps routes, let through elsewhere", async () => {
    const answer = await send(await t.token({ kind: "app", app_id: "app1", caps: [cap], fp: true }));
    if (rule.visibility === Visibility.INTERNAL) expect(answer.body).toMatchObject({ status: 403, code: "auth.internal_only" });
    else if (rule.neverToApps) expect(answer.body).toMatchObject({ status: 403, code: "auth.never_to_apps" });
    // Let through: whatever the service answers, enforcement did not refuse it, and nothing failed.
    else {
      expect(String(answer.body?.code ?? "")).not.toMatch(/^auth\./);
      expect(answer.status).toBeLessThan(500);
    }
  });

  it("a user token: refused on internal and no-people routes, let through to ownership checks elsewhere", async () => {
    const answer = await send(await t.token({ kind: "user", sub: "usr_a1" }));
    if (rule.visibility === Visibility.INTERNAL) {
      expect(answer.status).toBe(403);
      expect(answer.body.code).toBe("auth.internal_only");
    } else if (rule.noPeople) {
      expect(answer.body).toMatchObject({ status: 403, code: "auth.people_refused" });
    } else {
      // People are checked by the service's ownership rules, not by capability.
      expect(String(answer.body?.code ?? "")).not.toMatch(/^auth\./);
    }
  });

  it("X-PF-Subject, X-PF-Staff or X-PF-Origin sent with a non-service token (403 auth.header_refused)", async () => {
    const user = await t.token({ kind: "user", sub: "usr_a1" });
    const app = await t.token({ kind: "app", app_id: "app1", caps: [cap], fp: true });
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

  it("X-PF-Subject from a service where the route acts for nobody (400 auth.acting_subject_refused)", async () => {
    const service = await t.token({ kind: "service", svc: "tips", caps: [cap], app_id: "app1" });
    const answer = await send(service, { "x-pf-subject": "usr_b1" });
    expect(rule.actingSubject).toBe(false);
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe("auth.acting_subject_refused");
  });

  it("a mod's token where the spec says never to mods (403 auth.never_to_mods)", async () => {
    const answer = await send(await t.token({ kind: "service", svc: "games", caps: [cap], app_id: "app1", mod: "mod_1" }));
    if (rule.neverToMods) {
      expect(answer.status).toBe(403);
      expect(answer.body.code).toBe("auth.never_to_mods");
    } else {
      expect(answer.body?.code).not.toBe("auth.never_to_mods");
    }
  });
});

describe.each(routes)("$name refuses malformed input", ({ name, rule }) => {
  const call = calls[name];
  it("an unknown field or query parameter (400 request.invalid naming it, never 500)", async () => {
    const token = await t.token({ kind: "service", svc: "network", caps: [rule.capabilities[0]], app_id: "app1" });
    const answer = call.body === undefined
      ? await t.http(call.method, `${call.path}${call.path.includes("?") ? "&" : "?"}bogus=1`, { token })
      : await t.http(call.method, call.path, { token, body: { ...(call.body as object), bogus: 1 } });
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe("request.invalid");
    expect(answer.body.detail).toContain("bogus");
  });
});

describe("the OpenAPI document", () => {
  it("lists every network route with its capability and visibility", async () => {
    const answer = await t.http("GET", "/openapi.json");
    expect(answer.status).toBe(200);
    const operations = Object.entries(answer.body.paths as Record<string, Record<string, { "x-pf-capabilities": string[]; "x-pf-visibility": string }>>)
      .flatMap(([path, item]) => Object.entries(item).map(([verb, op]) => ({ route: `${verb.toUpperCase()} ${path}`, op })));
    for (const call of Object.values(calls)) {
      const path = call.path.replace(/\?.*$/, "").replace("/network/usr_a1", "/{namespace}/{subject}").replace("/mention", "/{kind}");
      expect(operations.map((o) => o.route), path).toContain(`${call.method} ${path}`);
    }
    expect(operations.find((o) => o.route === "POST /network/internal/coins/credit")?.op).toMatchObject({
      "x-pf-capabilities": ["network.coins.credit"],
      "x-pf-visibility": "internal",
    });
  });
});

describe("text no service can store", () => {
  it.each([
    ["a NUL in a body field", "POST", "/network/internal/notifications/mention", { recipients: ["usr_a1"], title: "a\u0000b" }, "title"],
    ["a NUL in a query parameter", "GET", "/network/internal/identity/resolve?service=tips&local_id=%00", undefined, "local_id"],
    ["a lone surrogate inside a record", "PUT", "/network/internal/modules/network/usr_a1", { record: { a: "\ud800" } }, "record.a"],
    ["a number past double range inside a record", "PUT", "/network/internal/modules/network/usr_a1", '{"record":{"a":1e400}}', "record.a"],
    ["a NUL in a record's key", "PUT", "/network/internal/modules/network/usr_a1", '{"record":{"a\\u0000b":1}}', "record.a\u0000b"],
  ])("refuses %s with 400 naming the field, and writes nothing", async (_what, method, path, body, field) => {
    const token = await t.token({ kind: "service", svc: "network", caps: ["network.notifications.push", "identity.subject.resolve", "network.modules.write"] });
    const answer = await t.http(method, path, { token, body });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: "request.invalid", field });
    const db = t.platform.contexts.get("network")!.orm.em.getConnection();
    const [written] = await db.execute<{ n: string }[]>(
      `select (select count(*) from network.module_records where subject = 'usr_a1') + (select count(*) from network.notifications where title like 'a%b') as n`,
    );
    expect(written.n).toBe("0");
  });
});

