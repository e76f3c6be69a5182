import { beforeAll, describe, expect, it } from "vitest";
import { GamesService } from "../../gen/pf/games/v1/games_pb.js";
import { StaffRole } from "../../gen/pf/network/v1/network_pb.js";
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
import { contentPack, manifest, seedStaff } from "./support.js";

/** One valid call per route; the refusals vary only the caller. */
const calls: Record<string, RouteCall> = {
  listMods: { method: "GET", path: "/games/api/v1/mods" },
  installMod: {
    method: "POST",
    path: "/games/api/v1/mods",
    body: { manifest: manifest(), content_pack: contentPack() },
  },
  getMod: { method: "GET", path: "/games/api/v1/mods/mod_1" },
  listModAudit: { method: "GET", path: "/games/api/v1/mods/mod_1/audit" },
  disableMod: { method: "POST", path: "/games/api/v1/mods/mod_1/disable", body: {} },
  enableMod: { method: "POST", path: "/games/api/v1/mods/mod_1/enable", body: {} },
  grantCapability: { method: "POST", path: "/games/api/v1/mods/mod_1/grants", body: { capability: "world.read" } },
  ungrantCapability: { method: "DELETE", path: "/games/api/v1/mods/mod_1/grants/world.read" },
  revokeMod: { method: "POST", path: "/games/api/v1/mods/mod_1/revoke", body: {} },
};

const routes = routesOf(GamesService);
// Network runs beside games: the matrix's person (usr_a1) is a network admin, so a person's own token reaches the handler.
const t = usePlatform({ services: ["games", "network"] });
beforeAll(() => seedStaff(t, { usr_a1: StaffRole.ADMIN }));

describe("every games route", () => {
  it("has a call here (9 routes)", () => {
    expect(routes).toHaveLength(9);
    expect(Object.keys(calls).sort()).toEqual(routes.map((route) => route.name).sort());
  });

  itWithSpec("matches routes.tsv exactly (9 routes: method, path, capability, visibility)", "games", (documented) => {
    expect(documented).toHaveLength(9);
    const bound = routes.map(bindingOf);
    for (const [, verb, path, caps, visibility] of documented) {
      expect(bound, `${verb} ${path}`).toContainEqual({ verb, template: path, caps, visibility });
    }
  });
});

describe("whom each games route admits, as declared", () => {
  it("reads are public and open to anonymous callers; manage is first-party and never to mods: by capability, or a network owner or admin by the declared relation", () => {
    for (const route of routes) {
      const read = route.name === "listMods" || route.name === "getMod";
      expect(Actor[route.rule.actor], route.name).toBe("UNSPECIFIED");
      if (read) {
        expect(route.rules, route.name).toHaveLength(1);
        expect(route.rule, route.name).toMatchObject({ anonymous: true, capabilities: ["games.mod.read"] });
        continue;
      }
      const manage = { anonymous: false, capabilities: ["games.mod.manage"], neverToMods: true };
      expect(route.rules, route.name).toHaveLength(2);
      expect(route.rule, route.name).toMatchObject({ ...manage, name: "capability", noPeople: true });
      expect(route.rule.relation, route.name).toBeUndefined();
      const [, staff] = route.rules;
      expect(staff, route.name).toMatchObject({ ...manage, name: "network_staff", noPeople: false });
      expect(Actor[staff.actor], route.name).toBe("PERSON");
      expect(staff.relation, route.name).toMatchObject({
        name: "network_staff",
        scopeField: "",
        roles: ["owner", "admin"],
      });
    }
    expect(routes[0].relations).toEqual([
      expect.objectContaining({ name: "network_staff", refusal: "auth.staff_required", actingForNobody: false }),
    ]);
  });

  it("reads answer a caller without a token", async () => {
    expect((await t.http("GET", "/games/api/v1/mods")).status).toBe(200);
    expect((await t.http("GET", "/games/api/v1/mods/mod_1")).body).toMatchObject({ status: 404 });
  });
});

describeRefusals(t, routes, calls);
describeMalformedInput(t, routes, calls);
