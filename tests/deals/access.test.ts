import { describe, expect, it } from "vitest";
import { DealsService } from "../../gen/pf/deals/v1/deals_pb.js";
import { type Access, Actor, Visibility } from "../../gen/pf/v1/options_pb.js";
import {
  bindingOf,
  describeMalformedInput,
  describeRefusals,
  itWithSpec,
  routesOf,
  type RouteCall,
} from "../support/access.js";
import { usePlatform } from "../support/platform.js";

/** One valid call per deals route; the refusals vary only the caller. */
const calls: Record<string, RouteCall> = {
  listFlags: { method: "GET", path: "/deals/api/v1/flags" },
  resolveFlag: {
    method: "POST",
    path: "/deals/api/v1/flags/flg_1/resolve",
    body: { outcome: "FLAG_OUTCOME_DISMISSED" },
  },
  submitOffer: {
    method: "POST",
    path: "/deals/api/v1/offers",
    body: { link: "https://shop.example/access", title: "A deal" },
  },
  updateOffer: { method: "PATCH", path: "/deals/api/v1/offers/off_1", body: { title: "New" } },
  recordObservation: {
    method: "POST",
    path: "/deals/api/v1/offers/off_1/observations",
    body: { observation: { condition: "CONDITION_NEW" } },
  },
  disableOffer: { method: "POST", path: "/deals/api/v1/offers/off_1/disable", body: {} },
  enableOffer: { method: "POST", path: "/deals/api/v1/offers/off_1/enable", body: {} },
  reviewOffer: { method: "POST", path: "/deals/api/v1/offers/off_1/review", body: {} },
  expireOffer: { method: "POST", path: "/deals/api/v1/offers/off_1/expire", body: {} },
  flagOffer: { method: "POST", path: "/deals/api/v1/offers/off_1/flags", body: { reason: "FLAG_REASON_SPAM" } },
  mergeOffer: { method: "POST", path: "/deals/api/v1/offers/off_1/merge", body: { into: "off_2" } },
  unmergeOffer: { method: "POST", path: "/deals/api/v1/offers/off_1/unmerge", body: {} },
  setVote: { method: "PUT", path: "/deals/api/v1/offers/off_1/vote", body: { value: 1 } },
  removeVote: { method: "DELETE", path: "/deals/api/v1/offers/off_1/vote" },
  resolveProduct: {
    method: "POST",
    path: "/deals/api/v1/products/resolve",
    body: { gtin: "4006381333931", create: false },
  },
  listWatches: { method: "GET", path: "/deals/api/v1/watches" },
  createWatch: { method: "POST", path: "/deals/api/v1/watches", body: { kind: "WATCH_KIND_KEYWORD", keyword: "lego" } },
  deleteWatch: { method: "DELETE", path: "/deals/api/v1/watches/wch_1" },
};

const routes = routesOf(DealsService);
const t = usePlatform({ services: ["deals"] });

describe("every deals route", () => {
  it("has a call here (18 routes)", () => {
    expect(routes).toHaveLength(18);
    expect(Object.keys(calls).sort()).toEqual(routes.map((route) => route.name).sort());
  });

  itWithSpec("matches routes.tsv exactly (18 routes: method, path, capability, visibility)", "deals", (documented) => {
    expect(documented).toHaveLength(18);
    const bound = routes.map(bindingOf);
    for (const [, verb, path, caps, visibility] of documented) {
      expect(bound, `${verb} ${path}`).toContainEqual({ verb, template: path, caps, visibility });
    }
  });
});

describe("whom each deals route acts for, as declared", () => {
  const actorOf = (rule: Access) => Actor[rule.actor];

  it("moderation needs staff; a person's writes and reads need a person; product resolve acts for nobody", () => {
    const declared = Object.fromEntries(
      routes.filter((route) => route.name !== "expireOffer").map((route) => [route.name, actorOf(route.rule)]),
    );
    const staff = [
      "listFlags",
      "resolveFlag",
      "disableOffer",
      "enableOffer",
      "reviewOffer",
      "mergeOffer",
      "unmergeOffer",
    ];
    const people = [
      "submitOffer",
      "updateOffer",
      "recordObservation",
      "flagOffer",
      "setVote",
      "removeVote",
      "listWatches",
      "createWatch",
      "deleteWatch",
    ];
    expect(declared).toEqual({
      ...Object.fromEntries(staff.map((name) => [name, "STAFF"])),
      ...Object.fromEntries(people.map((name) => [name, "PERSON"])),
      resolveProduct: "UNSPECIFIED",
    });
  });

  it("expire: a platform moderator first (no app), else the person expiring their own offer", () => {
    const expire = routes.find((route) => route.name === "expireOffer")!;
    const rules = expire.rules.map((rule) => [
      rule.name,
      actorOf(rule),
      rule.capabilities,
      Visibility[rule.visibility],
    ]);
    expect(rules).toEqual([
      ["moderate", "PLATFORM_STAFF", ["deals.offer.expire"], "FIRST_PARTY"],
      ["own", "PERSON", ["deals.offer.expire"], "FIRST_PARTY"],
    ]);
  });
});

describeRefusals(t, routes, calls);
describeMalformedInput(t, routes, calls);
