import { describe, expect, it } from "vitest";
import { NewsClusterService } from "../../gen/pf/news/v1/clusters_pb.js";
import { NewsContentService } from "../../gen/pf/news/v1/content_pb.js";
import { NewsSourcingService } from "../../gen/pf/news/v1/sourcing_pb.js";
import { NewsStoryService } from "../../gen/pf/news/v1/stories_pb.js";
import { type Access, Actor } from "../../gen/pf/v1/options_pb.js";
import {
  bindingOf,
  describeMalformedInput,
  describeRefusals,
  itWithSpec,
  routesOf,
  type RouteCall,
} from "../support/access.js";
import { describeContentAccess } from "../support/content-access.js";
import { usePlatform } from "../support/platform.js";
import { NEWS_ENV } from "./support.js";

const story = "/news/api/v1/stories/sty_1";

/** One valid call per route of the three news proto services; the refusals vary only the caller. */
const calls: Record<string, RouteCall> = {
  listClusters: { method: "GET", path: "/news/api/v1/clusters" },
  getCluster: { method: "GET", path: "/news/api/v1/clusters/ncl_1" },
  mergeCluster: {
    method: "POST",
    path: "/news/api/v1/clusters/ncl_1/merge",
    body: { cluster_ids: ["ncl_2"], reason: "Same event" },
  },
  splitCluster: {
    method: "POST",
    path: "/news/api/v1/clusters/ncl_1/split",
    body: { item_ids: ["itm_1"], reason: "Different event" },
  },
  reverseClusterChange: {
    method: "POST",
    path: "/news/api/v1/clusters/audit/cau_1/reverse",
    body: { reason: "Undo" },
  },
  getIngest: { method: "GET", path: "/news/api/v1/ingest" },
  getSourceItem: { method: "GET", path: "/news/api/v1/source-items/itm_1" },
  createStory: { method: "POST", path: "/news/api/v1/stories", body: { cluster_id: "ncl_1" } },
  listStories: { method: "GET", path: "/news/api/v1/stories" },
  getStory: { method: "GET", path: story },
  requestAiDraft: { method: "POST", path: `${story}/ai-drafts`, body: { ai_draft: { instructions: "Short" } } },
  getDiff: { method: "GET", path: `${story}/diff` },
  addFlag: { method: "POST", path: `${story}/flags`, body: { flag: { note: "Check the date" } } },
  publishStory: { method: "POST", path: `${story}/publish`, body: {} },
  retractStory: { method: "POST", path: `${story}/retract`, body: { note: "Wrong" } },
  listRevisions: { method: "GET", path: `${story}/revisions` },
  saveRevision: {
    method: "POST",
    path: `${story}/revisions`,
    body: { revision: { headline: { text: "Headline", citations: [1] } } },
  },
  getRevision: { method: "GET", path: `${story}/revisions/1` },
  approveRevision: { method: "POST", path: `${story}/revisions/1/approve`, body: {} },
  attachSource: { method: "POST", path: `${story}/sources`, body: { item: "itm_1" } },
  detachSource: { method: "DELETE", path: `${story}/sources/itm_1` },
  addPerspective: { method: "POST", path: `${story}/perspectives`, body: { label: "Officials" } },
  deletePerspective: { method: "DELETE", path: `${story}/perspectives/psp_1` },
  setSourcePerspective: {
    method: "PUT",
    path: `${story}/sources/itm_1/perspective`,
    body: { perspective_id: "psp_1" },
  },
  addTimelineEntry: {
    method: "POST",
    path: `${story}/timeline`,
    body: { date: "27 November 2026", text: "It happened", source_number: 1 },
  },
  deleteTimelineEntry: { method: "DELETE", path: `${story}/timeline/tle_1` },
};

const routes = routesOf(NewsClusterService, NewsStoryService, NewsSourcingService);
// The matrix's people (usr_a1, usr_b1) are editors: their calls reach the handler.
const t = usePlatform({ services: ["news"], env: NEWS_ENV });
const DESIGNED = ["listStories", "approveRevision"];

describe("every news route", () => {
  it("has a call here (26 routes: 24 documented, 2 designed)", () => {
    expect(routes).toHaveLength(26);
    expect(Object.keys(calls).sort()).toEqual(routes.map((route) => route.name).sort());
  });

  itWithSpec(
    "matches routes.tsv exactly (24 documented routes: method, path, capability, visibility)",
    "news",
    (documented) => {
      expect(documented).toHaveLength(24);
      // Proto fields are snake case: the spec's {auditId} is the request's audit_id.
      const bound = routes
        .filter((route) => !DESIGNED.includes(route.name))
        .map(bindingOf)
        .map((binding) => ({ ...binding, template: binding.template.replace("{audit_id}", "{auditId}") }));
      expect(bound).toHaveLength(documented.length);
      for (const [, verb, path, caps, visibility] of documented) {
        expect(bound, `${verb} ${path}`).toContainEqual({ verb, template: path, caps, visibility });
      }
    },
  );
});

describe("whom each news route acts for, as declared", () => {
  const ruleOf = (name: string): Access => routes.find((route) => route.name === name)!.rule;

  it("create, publish, retract and approve act for a network user; the rest for an editor or a service", () => {
    const members = ["createStory", "publishStory", "retractStory", "approveRevision"];
    for (const route of routes) {
      expect(Actor[route.rule.actor], route.name).toBe(members.includes(route.name) ? "MEMBER" : "UNSPECIFIED");
      expect(ruleOf(route.name).actingSubject, route.name).toBe(true);
    }
  });

  it("only the published-story reads are open to anonymous callers", () => {
    const open = routes.filter((route) => route.rules.some((rule) => rule.anonymous)).map((route) => route.name);
    expect(open.sort()).toEqual(["getRevision", "getStory", "listStories"]);
  });

  it("every route's main rule requires the editor relation; the open reads and AI revisions have another rule", () => {
    for (const route of routes) {
      expect(route.rule.relation?.name, route.name).toBe("editor");
      expect(route.relations, route.name).toContainEqual(
        expect.objectContaining({ name: "editor", refusal: "auth.editor_required", actingForNobody: true }),
      );
    }
    const others = routes.filter((route) => route.rules.length > 1).map((route) => [route.name, route.rules[1].name]);
    expect(others.sort()).toEqual([
      ["getRevision", "reader"],
      ["getStory", "reader"],
      ["listStories", "reader"],
      ["saveRevision", "ai"],
    ]);
  });
});

describeRefusals(t, routes, calls);
describeMalformedInput(t, routes, calls);

// The content access community asks about this service's objects for their comment threads.
describeContentAccess(t, NewsContentService, "news.content.check", {
  kind: "story",
  id: "sty_01jd0000000000000000000000",
});
