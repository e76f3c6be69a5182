import { describe, expect, it } from "vitest";
import { CodesService } from "../../gen/pf/codes/v1/codes_pb.js";
import { Actor, Visibility } from "../../gen/pf/v1/options_pb.js";
import {
  bindingOf,
  describeMalformedInput,
  describeRefusals,
  itWithSpec,
  routesOf,
  type RouteCall,
} from "../support/access.js";
import { usePlatform } from "../support/platform.js";
import { AUD, appManifest } from "./support.js";

/** One valid call per route; the refusals vary only the caller. */
const calls: Record<string, RouteCall> = {
  listReleases: { method: "GET", path: "/codes/api/v1/apps/app1/releases" },
  createRelease: {
    method: "POST",
    path: "/codes/api/v1/apps/app1/releases",
    body: { manifest: appManifest("1.0.0"), compatibility: ">=1.0.0" },
  },
  getTrust: { method: "GET", path: "/codes/api/v1/apps/app1/trust" },
  getRelease: { method: "GET", path: "/codes/api/v1/releases/rel_1" },
  deprecateRelease: { method: "POST", path: "/codes/api/v1/releases/rel_1/deprecate", body: { reason: "Old." } },
  publishRelease: { method: "POST", path: "/codes/api/v1/releases/rel_1/publish", body: {} },
  revokeRelease: { method: "POST", path: "/codes/api/v1/releases/rel_1/revoke", body: {} },
};

const routes = routesOf(CodesService);
// The designed SetTrust has no HTTP route: its refusals are in trust.test.ts, over RPC.
const bound = routes.filter((route) => route.name !== "setTrust");
const t = usePlatform({ services: ["codes"] });

describe("every codes route", () => {
  it("has a call here (7 documented routes; the designed SetTrust has none)", () => {
    expect(routes.map((route) => route.name)).toContain("setTrust");
    expect(bound).toHaveLength(7);
    expect(Object.keys(calls).sort()).toEqual(bound.map((route) => route.name).sort());
  });

  itWithSpec("matches routes.tsv exactly (7 routes: method, path, capability, visibility)", "codes", (documented) => {
    expect(documented).toHaveLength(7);
    expect(bound.map(bindingOf)).toHaveLength(documented.length);
    for (const [, verb, path, caps, visibility] of documented) {
      expect(bound.map(bindingOf), `${verb} ${path}`).toContainEqual({ verb, template: path, caps, visibility });
    }
  });

  it("takes tokens for the release-metadata audience only, on every route", () => {
    for (const route of routes) expect(route.audience, route.name).toBe(AUD);
  });
});

describe("whom each codes route admits, as declared", () => {
  const ruleOf = (name: string) => routes.find((route) => route.name === name)!.rule;

  it("reads are public and open to callers without a token", () => {
    for (const name of ["listReleases", "getTrust", "getRelease"]) {
      expect(ruleOf(name), name).toMatchObject({ visibility: Visibility.PUBLIC, anonymous: true });
    }
  });

  it("manage is public, never anonymous, and refuses people (their portal is not this API) and mods", () => {
    for (const name of ["createRelease", "publishRelease", "deprecateRelease", "revokeRelease"]) {
      expect(ruleOf(name), name).toMatchObject({
        visibility: Visibility.PUBLIC,
        anonymous: false,
        noPeople: true,
        neverToMods: true,
        capabilities: ["codes.release.manage"],
      });
    }
  });

  it("trust tiers are set only by platform staff holding codes.trust.manage on an internal, designed route", () => {
    expect(ruleOf("setTrust")).toMatchObject({
      visibility: Visibility.INTERNAL,
      actor: Actor.PLATFORM_STAFF,
      capabilities: ["codes.trust.manage"],
      capabilityUnchecked: false,
    });
  });
});

describeRefusals(t, bound, calls);
describeMalformedInput(t, bound, calls);
