import { describe, expect, it } from "vitest";
import { SourcesService } from "../../gen/pf/sources/v1/sources_pb.js";
import { Actor } from "../../gen/pf/v1/options_pb.js";
import {
  bindingOf,
  describeMalformedInput,
  describeRefusals,
  itWithSpec,
  routesOf,
  type RouteCall,
} from "../support/access.js";
import { usePlatform } from "../support/platform.js";
import { ALL_SOURCES, QUIET_WORKERS } from "./support.js";

/** One valid call per sources route; the refusals vary only the caller. */
const calls: Record<string, RouteCall> = {
  getHealth: { method: "GET", path: "/sources/api/v1/health" },
  listItems: { method: "GET", path: "/sources/api/v1/items?after=0" },
  getItem: { method: "GET", path: "/sources/api/v1/items/itm_1" },
  removeItem: { method: "DELETE", path: "/sources/api/v1/items/itm_1?reason=duplicate" },
  listRuns: { method: "GET", path: "/sources/api/v1/runs" },
  listSources: { method: "GET", path: "/sources/api/v1/sources" },
  createSource: {
    method: "POST",
    path: "/sources/api/v1/sources",
    body: { key: "access-manual", kind: "SOURCE_KIND_MANUAL" },
  },
  getSource: { method: "GET", path: "/sources/api/v1/sources/access-manual" },
  updateSource: { method: "PATCH", path: "/sources/api/v1/sources/access-manual", body: { title: "Access" } },
  deleteSource: { method: "DELETE", path: "/sources/api/v1/sources/access-none" },
  fetchSource: { method: "POST", path: "/sources/api/v1/sources/access-manual/fetch", body: {} },
  addItems: {
    method: "POST",
    path: "/sources/api/v1/sources/access-manual/items",
    body: { items: [{ evidence_url: "https://example.com/a", title: "A" }] },
  },
  listSourceRuns: { method: "GET", path: "/sources/api/v1/sources/access-manual/runs" },
};

const routes = routesOf(SourcesService);
// No fetch ever runs here (the executor is off).
const t = usePlatform({ services: ["sources"], env: QUIET_WORKERS });

describe("every sources route", () => {
  it("has a call here (13 routes)", () => {
    expect(routes).toHaveLength(13);
    expect(Object.keys(calls).sort()).toEqual(routes.map((route) => route.name).sort());
  });

  itWithSpec(
    "matches routes.tsv exactly (13 routes: method, path, capability, visibility)",
    "sources",
    (documented) => {
      expect(documented).toHaveLength(13);
      const bound = routes.map(bindingOf);
      for (const [, verb, path, caps, visibility] of documented) {
        expect(bound, `${verb} ${path}`).toContainEqual({ verb, template: path, caps, visibility });
      }
    },
  );
});

describe("who each sources route admits, as declared", () => {
  it("manage is for services and first-party apps acting for nobody, or for staff they vouch: never a person's token", () => {
    const manage = routes.filter((route) => route.rule.capabilities.includes("sources.source.manage"));
    expect(manage.map((route) => route.name).sort()).toEqual([
      "addItems",
      "createSource",
      "deleteSource",
      "fetchSource",
      "removeItem",
      "updateSource",
    ]);
    for (const route of manage) {
      expect(route.rule, route.name).toMatchObject({ noPeople: true, actor: Actor.STAFF });
    }
  });

  it("reads are staff's too (runs and failure details name internal hosts): never a person's or a guest's token", () => {
    const reads = routes.filter((route) => !route.rule.capabilities.includes("sources.source.manage"));
    expect(reads).toHaveLength(7);
    for (const route of reads) expect(route.rule, route.name).toMatchObject({ noPeople: true, actor: Actor.STAFF });
  });
});

describe("who reads sources, runs and failure details", () => {
  const reads = Object.entries(calls).filter(([, call]) => call.method === "GET");

  it("refuses a signed-in person's and a guest's own token on every read (403 auth.people_refused)", async () => {
    expect(reads).toHaveLength(7);
    for (const sub of ["usr_reader", "gst_visitor"]) {
      const token = await t.token({ kind: "user", sub, caps: ALL_SOURCES });
      for (const [name, call] of reads) {
        const answer = await t.http(call.method, call.path, { token });
        expect([name, sub, answer.status, answer.body.code]).toEqual([name, sub, 403, "auth.people_refused"]);
      }
    }
  });

  it("refuses a service acting for a person it does not vouch as staff, and admits one it does", async () => {
    const token = await t.token({ kind: "service", svc: "news", caps: ALL_SOURCES });
    const asPerson = await t.http("GET", "/sources/api/v1/runs", { token, headers: { "x-pf-subject": "usr_reader" } });
    expect([asPerson.status, asPerson.body.code]).toEqual([403, "auth.staff_required"]);
    const staff = { "x-pf-subject": "usr_staffer", "x-pf-staff": "1" };
    expect((await t.http("GET", "/sources/api/v1/runs", { token, headers: staff })).status).toBe(200);
    expect((await t.http("GET", "/sources/api/v1/health", { token })).status).toBe(200);
  });
});

describeRefusals(t, routes, calls);
describeMalformedInput(t, routes, calls);
