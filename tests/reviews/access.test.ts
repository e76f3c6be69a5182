import { describe, expect, it } from "vitest";
import { ReviewCorrectionsService } from "../../gen/pf/reviews/v1/corrections_pb.js";
import { ReviewsService } from "../../gen/pf/reviews/v1/entities_pb.js";
import { ReviewSignalsService } from "../../gen/pf/reviews/v1/signals_pb.js";
import { ReviewSummariesService } from "../../gen/pf/reviews/v1/summaries_pb.js";
import { Actor } from "../../gen/pf/v1/options_pb.js";
import { getOption } from "@bufbuild/protobuf";
import { designed } from "../../gen/pf/v1/options_pb.js";
import {
  bindingOf,
  describeMalformedInput,
  describeRefusals,
  itWithSpec,
  routesOf,
  type RouteCall,
} from "../support/access.js";
import { usePlatform } from "../support/platform.js";
import { REVIEWS_ENV } from "./support.js";

const E = "/reviews/api/v1/entities";
/** One valid call per route; the refusals vary only the caller. */
const calls: Record<string, RouteCall> = {
  resolveEntities: { method: "GET", path: `${E}?q=Widget` },
  createEntity: { method: "POST", path: E, body: { name: "Access Widget" } },
  getEntity: { method: "GET", path: `${E}/ent_1` },
  updateEntity: { method: "PATCH", path: `${E}/ent_1`, body: { name: "Renamed" } },
  deleteEntity: { method: "DELETE", path: `${E}/ent_1` },
  getAggregate: { method: "GET", path: `${E}/ent_1/aggregate` },
  addAlias: { method: "POST", path: `${E}/ent_1/aliases`, body: { alias_kind: "sku", alias: "AB-1" } },
  removeAlias: { method: "DELETE", path: `${E}/ent_1/aliases/als_1` },
  getHistory: { method: "GET", path: `${E}/ent_1/history` },
  addLink: { method: "POST", path: `${E}/ent_1/links`, body: { link_type: "related", target: "ent_2" } },
  removeLink: { method: "DELETE", path: `${E}/ent_1/links/lnk_1` },
  mergeEntity: { method: "POST", path: `${E}/ent_1/merge`, body: { into: "ent_2", reason: "same" } },
  splitEntity: { method: "POST", path: `${E}/ent_1/split`, body: { reason: "different" } },
  putNotes: { method: "PUT", path: `${E}/ent_1/notes`, body: { limitation: "Few reviews." } },
  putBinding: { method: "PUT", path: `${E}/ent_1/bindings/shop`, body: {} },
  writeSignal: {
    method: "POST",
    path: `${E}/ent_1/signals`,
    body: { kind: "rating", score: 4, scale: 5, source_key: "shop", source_ref: "r1" },
  },
  listSignals: { method: "GET", path: `${E}/ent_1/signals` },
  addExclusion: { method: "POST", path: `${E}/ent_1/exclusions`, body: { source: "shop", reason: "paid" } },
  removeExclusion: { method: "DELETE", path: `${E}/ent_1/exclusions/exc_1` },
  listQueue: { method: "GET", path: "/reviews/api/v1/resolution-queue" },
  decideQueueItem: { method: "POST", path: "/reviews/api/v1/resolution-queue/rsq_1", body: { ignore: true } },
  proposeSummary: {
    method: "POST",
    path: `${E}/ent_1/summary/proposals`,
    body: { pros: [{ text: "Sturdy", citations: ["sig_1"] }], workflow: "reviews.summarize_entity", run_id: "run-1" },
  },
  publishSummary: { method: "POST", path: `${E}/ent_1/summary/publish`, body: { publish: { revision: 1 } } },
  getSummary: { method: "GET", path: `${E}/ent_1/summary` },
  getSummaryRevision: { method: "GET", path: `${E}/ent_1/summary/revisions/1` },
  submitCorrection: { method: "POST", path: `${E}/ent_1/corrections`, body: { text: "The name is wrong." } },
  listCorrections: { method: "GET", path: "/reviews/api/v1/corrections" },
  getCorrection: { method: "GET", path: "/reviews/api/v1/corrections/cor_1" },
  triageCorrection: { method: "PATCH", path: "/reviews/api/v1/corrections/cor_1", body: { state: "rejected" } },
};

const routes = routesOf(ReviewsService, ReviewSignalsService, ReviewSummariesService, ReviewCorrectionsService);
// The matrix's people (usr_a1, usr_b1) are editors: editorial routes then reach the handler.
const t = usePlatform({ services: ["reviews"], env: REVIEWS_ENV });

describe("every reviews route", () => {
  it("has a call here (29 routes: 17 documented, 12 designed)", () => {
    expect(routes).toHaveLength(29);
    expect(Object.keys(calls).sort()).toEqual(routes.map((route) => route.name).sort());
    expect(routes.filter((route) => getOption(route.method, designed))).toHaveLength(12);
  });

  itWithSpec(
    "matches routes.tsv exactly (17 documented routes: method, path, capability, visibility)",
    "reviews",
    (documented) => {
      expect(documented).toHaveLength(17);
      const bound = routes.filter((route) => !getOption(route.method, designed)).map(bindingOf);
      expect(bound).toHaveLength(documented.length);
      for (const [, verb, path, caps, visibility] of documented) {
        expect(bound, `${verb} ${path}`).toContainEqual({ verb, template: path, caps, visibility });
      }
    },
  );
});

describe("whom each reviews route acts for, as declared", () => {
  const ruleOf = (name: string) => routes.find((route) => route.name === name)!.rule;
  it("merge, split, summary publish and correction submit act for a person; propose is AI output; signals are for services", () => {
    for (const name of ["mergeEntity", "splitEntity", "publishSummary", "submitCorrection"])
      expect(Actor[ruleOf(name).actor], name).toBe("PERSON");
    expect(Actor[ruleOf("proposeSummary").actor]).toBe("AI_OUTPUT");
    expect(ruleOf("writeSignal")).toMatchObject({ noPeople: true, neverToApps: true, actingSubject: false });
  });
});

describeRefusals(t, routes, calls);
describeMalformedInput(t, routes, calls);
