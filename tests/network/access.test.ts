import { describe, expect, it } from "vitest";
import { NetworkService } from "../../gen/pf/network/v1/network_pb.js";
import {
  bindingOf,
  describeMalformedInput,
  describeRefusals,
  itWithSpec,
  routesOf,
  type RouteCall,
} from "../support/access.js";
import { usePlatform } from "../support/platform.js";

/** One valid call per network route; the refusals below vary only the caller. */
const calls: Record<string, RouteCall> = {
  listStaff: { method: "GET", path: "/network/api/v1/staff/moderators" },
  getBlocks: { method: "GET", path: "/network/internal/blocks?subject=usr_a1" },
  creditCoins: {
    method: "POST",
    path: "/network/internal/coins/credit",
    body: { subject: "usr_a1", amount: 5, idempotency_key: "k1" },
  },
  debitCoins: { method: "POST", path: "/network/internal/coins/debit", body: { subject: "usr_a1", amount: 1 } },
  transferCoins: {
    method: "POST",
    path: "/network/internal/coins/transfer",
    body: { from_subject: "usr_a1", to_subject: "usr_b1", amount: 1 },
  },
  resolveIdentity: { method: "GET", path: "/network/internal/identity/resolve?subject=usr_a1" },
  resolveIdentityBatch: {
    method: "POST",
    path: "/network/internal/identity/resolve-batch",
    body: { queries: [{ subject: "usr_a1" }] },
  },
  getGithubToken: { method: "GET", path: "/network/internal/integrations/github-token" },
  getModule: { method: "GET", path: "/network/internal/modules/network/usr_a1" },
  putModule: { method: "PUT", path: "/network/internal/modules/network/usr_a1", body: { record: { a: 1 } } },
  pushNotification: {
    method: "POST",
    path: "/network/internal/notifications/mention",
    body: { recipients: ["usr_a1"], title: "hi" },
  },
};

const routes = routesOf(NetworkService);

const t = usePlatform({ services: ["network"] });

describe("every network route is the spec's route", () => {
  it("has the spec's eleven routes", () => {
    expect(routes).toHaveLength(11);
  });

  itWithSpec("matches routes.tsv: method, path, capability and visibility", "network", (documented) => {
    expect(documented).toHaveLength(11);
    const bound = routes.map(bindingOf);
    for (const [, verb, path, caps, visibility] of documented) {
      const template = path.replace(/\?.*$/, "").replace("/*", "/{kind=**}");
      expect(bound, `${verb} ${path}`).toContainEqual({ verb, template, caps, visibility });
    }
  });
});

describeRefusals(t, routes, calls, { app_id: "app1" });
describeMalformedInput(t, routes, calls, { app_id: "app1" });

describe("the OpenAPI document", () => {
  it("lists every network route with its capability and visibility", async () => {
    // The whole document, internal routes included, is for service tokens.
    const answer = await t.http("GET", "/openapi.json", { token: await t.token({ kind: "service", svc: "tools" }) });
    expect(answer.status).toBe(200);
    const operations = Object.entries(
      answer.body.paths as Record<string, Record<string, { "x-pf-capabilities": string[]; "x-pf-visibility": string }>>,
    ).flatMap(([path, item]) =>
      Object.entries(item).map(([verb, op]) => ({ route: `${verb.toUpperCase()} ${path}`, op })),
    );
    for (const call of Object.values(calls)) {
      const path = call.path
        .replace(/\?.*$/, "")
        .replace("/network/usr_a1", "/{namespace}/{subject}")
        .replace("/mention", "/{kind}");
      expect(
        operations.map((o) => o.route),
        path,
      ).toContain(`${call.method} ${path}`);
    }
    expect(operations.find((o) => o.route === "POST /network/internal/coins/credit")?.op).toMatchObject({
      "x-pf-capabilities": ["network.coins.credit"],
      "x-pf-visibility": "internal",
    });
  });
});

describe("text no service can store", () => {
  it.each([
    [
      "a NUL in a body field",
      "POST",
      "/network/internal/notifications/mention",
      { recipients: ["usr_a1"], title: "a\u0000b" },
      "title",
    ],
    [
      "a NUL in a query parameter",
      "GET",
      "/network/internal/identity/resolve?service=tips&local_id=%00",
      undefined,
      "local_id",
    ],
    [
      "a lone surrogate inside a record",
      "PUT",
      "/network/internal/modules/network/usr_a1",
      { record: { a: "\ud800" } },
      "record.a",
    ],
    [
      "a number past double range inside a record",
      "PUT",
      "/network/internal/modules/network/usr_a1",
      '{"record":{"a":1e400}}',
      "record.a",
    ],
    [
      "a NUL in a record's key",
      "PUT",
      "/network/internal/modules/network/usr_a1",
      '{"record":{"a\\u0000b":1}}',
      "record.a\u0000b",
    ],
  ])("refuses %s with 400 naming the field, and writes nothing", async (_what, method, path, body, field) => {
    const token = await t.token({
      kind: "service",
      svc: "network",
      caps: ["network.notifications.push", "identity.subject.resolve", "network.modules.write"],
    });
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
