import { ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { SearchIndexService, SearchService } from "../../gen/pf/search/v1/search_pb.js";
import { Visibility } from "../../gen/pf/v1/options_pb.js";
import {
  bindingOf,
  describeMalformedInput,
  describeRefusals,
  itWithSpec,
  routesOf,
  type RouteCall,
} from "../support/access.js";
import { usePlatform } from "../support/platform.js";

// The matrix's service token is the tips service's: owner routes name `tips`, its own slug.
const document = { title: "Access", body: "", public: true, published: true };

/** One valid call per route; the refusals vary only the caller. */
const calls: Record<string, RouteCall> = {
  search: { method: "GET", path: "/search/api/v1/search?q=access&facets=kind&facet.kind=x" },
  getDocument: { method: "GET", path: "/search/api/v1/documents/tips/page/p1" },
  putDocument: {
    method: "PUT",
    path: "/search/api/v1/documents/tips/page/p1",
    body: { revision: "1", document },
  },
  deleteDocument: { method: "DELETE", path: "/search/api/v1/documents/tips/page/p2?revision=1" },
  listOwnerDocuments: { method: "GET", path: "/search/api/v1/owners/tips/documents?limit=10" },
  getOwnerDocument: { method: "GET", path: "/search/api/v1/owners/tips/documents/page/p1" },
  listRejections: { method: "GET", path: "/search/api/v1/owners/tips/rejections" },
  suggest: { method: "GET", path: "/search/api/v1/suggest?q=acc" },
};

const routes = routesOf(SearchService);
const t = usePlatform({ services: ["search"] });

describe("every search route", () => {
  it("has a call here (8 routes: 7 documented, the query itself designed)", () => {
    expect(routes).toHaveLength(8);
    expect(Object.keys(calls).sort()).toEqual(routes.map((route) => route.name).sort());
  });

  itWithSpec(
    "matches routes.tsv (7 documented routes: method, path, capabilities, visibilities)",
    "search",
    (documented) => {
      expect(documented).toHaveLength(7);
      // Query run (public, anonymous) and query delegate (first-party, acting for a person) are two rules of one route.
      const bound = routes.map((route) => {
        const visibilities = route.rules.map((rule) => Visibility[rule.visibility].toLowerCase().replace("_", "-"));
        const caps = route.rules.flatMap((rule) => rule.capabilities);
        return {
          ...bindingOf(route),
          caps: [...new Set(caps)].sort().join(", "),
          visibility: [...new Set(visibilities)].sort().join(", "),
        };
      });
      for (const [, verb, path, caps, visibility] of documented) {
        expect(bound, `${verb} ${path}`).toContainEqual({ verb, template: path, caps, visibility });
      }
      expect(bound.find((route) => route.template === "/api/v1/search")).toMatchObject({ verb: "GET" });
    },
  );

  it("owner routes are for services only; query routes open to anyone and to services acting for a person", () => {
    for (const route of routes) {
      if (route.rule.capabilities.includes("search.document.write")) {
        expect(route.rules, route.name).toHaveLength(1);
        expect(route.rule, route.name).toMatchObject({ noPeople: true, neverToApps: true, anonymous: false });
      } else {
        expect(
          route.rules.map((rule) => rule.name),
          route.name,
        ).toEqual(["delegate", "run"]);
        expect(route.rules[0], route.name).toMatchObject({ anonymous: false, actingSubject: true });
        expect(route.rules[1], route.name).toMatchObject({ anonymous: true, actingSubject: false });
      }
    }
  });
});

describeRefusals(t, routes, calls);
describeMalformedInput(t, routes, calls);

describe("the owner relay's batch write (gRPC only)", () => {
  const batch = { writes: [{ type: "page", id: "b1", revision: 1n, document }] };
  const code = async (token: string) => {
    try {
      await t.client(SearchIndexService, token).writeDocuments(batch);
      return "ok";
    } catch (error) {
      return ConnectError.from(error).rawMessage;
    }
  };

  it("takes a service token holding search.document.write, and refuses people, apps and other capabilities", async () => {
    expect(await code(await t.token({ kind: "service", svc: "tips", caps: ["search.document.write"] }))).toBe("ok");
    expect(await code(await t.token({ kind: "user", sub: "usr_a1" }))).toMatch(/internal/);
    expect(await code(await t.token({ kind: "app", app_id: "a1", fp: true, caps: ["search.document.write"] }))).toMatch(
      /internal/,
    );
    expect(await code(await t.token({ kind: "service", svc: "tips", caps: ["search.query.run"] }))).toMatch(
      /capability/,
    );
  });
});
