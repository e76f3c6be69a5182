import { describe, expect, it } from "vitest";
import { MarketContextService } from "../../gen/pf/trade/v1/context_pb.js";
import { TradeService } from "../../gen/pf/trade/v1/trade_pb.js";
import { type Access, Actor } from "../../gen/pf/v1/options_pb.js";
import {
  bindingOf,
  describeMalformedInput,
  describeRefusals,
  itWithSpec,
  routesOf,
  type RouteCall,
} from "../support/access.js";
import { usePlatform } from "../support/platform.js";
import { TRADE_ENV } from "./support.js";

const observation = {
  symbol: "AAPL",
  metric: "price",
  value: "189.50",
  unit: "USD",
  currency: "USD",
  observed_at: "2026-12-01T15:00:00Z",
  retrieved_at: "2026-12-01T15:00:05Z",
  source_key: "access-feed",
  source_ref: "access-1",
};

/** One valid call per route of both trade proto services; the refusals vary only the caller. */
const calls: Record<string, RouteCall> = {
  listAlerts: { method: "GET", path: "/trade/api/v1/alerts" },
  createAlert: {
    method: "POST",
    path: "/trade/api/v1/alerts",
    body: { symbol: "AAPL", kind: "ALERT_KIND_NEW_DOCUMENT" },
  },
  deleteAlert: { method: "DELETE", path: "/trade/api/v1/alerts/alr_1" },
  listDeliveries: { method: "GET", path: "/trade/api/v1/alerts/deliveries" },
  createInstrument: {
    method: "POST",
    path: "/trade/api/v1/instruments",
    body: { symbol: "ACCESS", name: "Access Inc.", kind: "INSTRUMENT_KIND_EQUITY" },
  },
  updateInstrument: { method: "PATCH", path: "/trade/api/v1/instruments/ACCESS", body: { name: "Access Corp." } },
  addAlias: {
    method: "POST",
    path: "/trade/api/v1/instruments/ACCESS/aliases",
    body: { alias_kind: "ALIAS_KIND_NAME", alias: "Access" },
  },
  resolveInstrument: { method: "GET", path: "/trade/api/v1/instruments/resolve?q=AAPL" },
  recordObservation: { method: "POST", path: "/trade/api/v1/observations", body: observation },
  listWatchlists: { method: "GET", path: "/trade/api/v1/watchlists" },
  createWatchlist: { method: "POST", path: "/trade/api/v1/watchlists", body: { name: "Tech" } },
  getWatchlist: { method: "GET", path: "/trade/api/v1/watchlists/wlt_1" },
  renameWatchlist: { method: "PATCH", path: "/trade/api/v1/watchlists/wlt_1", body: { name: "Renamed" } },
  deleteWatchlist: { method: "DELETE", path: "/trade/api/v1/watchlists/wlt_1" },
  putWatchlistItem: { method: "PUT", path: "/trade/api/v1/watchlists/wlt_1/items/AAPL", body: {} },
  deleteWatchlistItem: { method: "DELETE", path: "/trade/api/v1/watchlists/wlt_1/items/AAPL" },
  getContext: { method: "GET", path: "/trade/api/v1/instruments/AAPL/context" },
  proposeContext: {
    method: "POST",
    path: "/trade/api/v1/instruments/AAPL/context",
    body: { propose: { text: "Apple reported quarterly revenue.", input_id: "cin_1", citations: [1] } },
  },
  getContextInput: { method: "GET", path: "/trade/api/v1/instruments/AAPL/context/input" },
};

const routes = routesOf(TradeService, MarketContextService);
// The matrix's people (usr_a1, usr_b1) are editors: instrument management then reaches the handler.
const t = usePlatform({ services: ["trade"], env: TRADE_ENV });

describe("every trade route", () => {
  it("has a call here (19 routes: 16 of TradeService, 3 of MarketContextService)", () => {
    expect(routes).toHaveLength(19);
    expect(Object.keys(calls).sort()).toEqual(routes.map((route) => route.name).sort());
  });

  itWithSpec("matches routes.tsv exactly (19 routes: method, path, capability, visibility)", "trade", (documented) => {
    expect(documented).toHaveLength(19);
    const bound = routes.map(bindingOf);
    expect(bound).toHaveLength(documented.length);
    for (const [, verb, path, caps, visibility] of documented) {
      expect(bound, `${verb} ${path}`).toContainEqual({ verb, template: path, caps, visibility });
    }
  });
});

describe("whom each trade route acts for, as declared", () => {
  const ruleOf = (name: string): Access => routes.find((route) => route.name === name)!.rule;

  it("watchlists and alerts act for the person; the rest for nobody in particular", () => {
    const people = [
      "listAlerts",
      "createAlert",
      "deleteAlert",
      "listDeliveries",
      "listWatchlists",
      "createWatchlist",
      "getWatchlist",
      "renameWatchlist",
      "deleteWatchlist",
      "putWatchlistItem",
      "deleteWatchlistItem",
    ];
    for (const route of routes) {
      expect(Actor[route.rule.actor], route.name).toBe(people.includes(route.name) ? "PERSON" : "UNSPECIFIED");
      expect(route.rules, route.name).toHaveLength(1);
    }
  });

  it("observations are for services only; resolve is open to anonymous readers; instrument manage takes acting subjects", () => {
    expect(ruleOf("recordObservation")).toMatchObject({ noPeople: true, neverToApps: true, actingSubject: false });
    expect(ruleOf("resolveInstrument")).toMatchObject({ anonymous: true });
    for (const name of ["createInstrument", "updateInstrument", "addAlias"]) {
      expect(ruleOf(name), name).toMatchObject({ actingSubject: true, anonymous: false });
    }
  });
});

describeRefusals(t, routes, calls);
describeMalformedInput(t, routes, calls);
