import { getOption } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { protoComments } from "../../gen/pf/docs.js";
import { TipsService } from "../../gen/pf/tips/v1/tips_pb.js";
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
import { usd } from "./support.js";

/** One valid call per TipsService route; the refusals vary only the caller. */
const calls: Record<string, RouteCall> = {
  createCheckout: { method: "POST", path: "/tips/api/v1/checkout", body: { creator: "usr_b1", amount: usd(100) } },
  createGoal: { method: "POST", path: "/tips/api/v1/goals", body: { title: "Mic", target: usd(1000) } },
  getGoal: { method: "GET", path: "/tips/api/v1/goals/gol_1" },
  updateGoal: { method: "PATCH", path: "/tips/api/v1/goals/gol_1", body: { title: "Mic 2" } },
  closeGoal: { method: "POST", path: "/tips/api/v1/goals/gol_1/close", body: {} },
  listInteractions: { method: "GET", path: "/tips/api/v1/interactions" },
  getInteraction: { method: "GET", path: "/tips/api/v1/interactions/int_1" },
  hideInteraction: { method: "POST", path: "/tips/api/v1/interactions/int_1/hide", body: { reason: "spam" } },
  restoreInteraction: { method: "POST", path: "/tips/api/v1/interactions/int_1/restore", body: { reason: "ok" } },
  recordExternal: {
    method: "POST",
    path: "/tips/api/v1/interactions/external",
    body: { creator: "usr_b1", provider: "kofi", provider_ref: "r1", amount: usd(100) },
  },
  createMediaRequest: {
    method: "POST",
    path: "/tips/api/v1/media-requests",
    body: { creator: "usr_b1", amount: usd(100), media_url: "https://youtube.com/watch?v=1", media_seconds: 60 },
  },
  listModerationQueue: { method: "GET", path: "/tips/api/v1/moderation?creator=usr_b1" },
  listModerationLog: { method: "GET", path: "/tips/api/v1/moderation/log?creator=usr_b1" },
  createPaidMessage: {
    method: "POST",
    path: "/tips/api/v1/paid-messages",
    body: { creator: "usr_b1", amount: usd(100), message: "hi" },
  },
  getProfile: { method: "GET", path: "/tips/api/v1/profiles/usr_b1" },
  updateProfile: { method: "PATCH", path: "/tips/api/v1/profiles/usr_b1", body: { accepting: true } },
  getPublicPage: { method: "GET", path: "/tips/api/v1/public/usr_b1" },
  listMediaQueue: { method: "GET", path: "/tips/api/v1/queue" },
};

const routes = routesOf(TipsService);
const t = usePlatform({ services: ["tips", "billing"] });

describe("every TipsService route", () => {
  it("has a call here", () => {
    expect(Object.keys(calls).sort()).toEqual(routes.map((route) => route.name).sort());
  });

  itWithSpec(
    "matches routes.tsv where documented (16 payment, goal, interaction, moderation and profile rows)",
    "tips",
    (rows) => {
      expect(routes).toHaveLength(18);
      const documented = rows.filter(([, , path]) => !path.startsWith("/api/v1/overlay-"));
      expect(documented).toHaveLength(16);
      const bound = routes.map((route) => ({ route, binding: bindingOf(route) }));
      for (const [, verb, path, caps, visibility] of documented) {
        expect(
          bound.map((b) => b.binding),
          `${verb} ${path}`,
        ).toContainEqual({ verb, template: path, caps, visibility });
      }
      const listed = (binding: { verb?: string; template: string }) =>
        documented.some(([, verb, path]) => verb === binding.verb && path === binding.template);
      const undocumented = bound.filter(({ binding }) => !listed(binding));
      expect(undocumented.map(({ route }) => route.name).sort()).toEqual(["getPublicPage", "listMediaQueue"]);
    },
  );

  it("marks the public tip page and the media queue designed, each comment describing its route", () => {
    expect(
      routes
        .filter((route) => getOption(route.method, designed))
        .map((route) => route.name)
        .sort(),
    ).toEqual(["getPublicPage", "listMediaQueue"]);
    for (const route of routes) {
      expect(protoComments[`${TipsService.typeName}.${route.method.name}`], route.name).toMatch(/^(?!Designed)\S/);
    }
  });

  it("serves the public tip page to anonymous callers (404 for a creator without a page, never 401)", async () => {
    const answer = await t.http("GET", "/tips/api/v1/public/usr_nobody1");
    expect(answer.body).toMatchObject({ status: 404, code: "profile.not_found" });
  });
});

describeRefusals(t, routes, calls);
describeMalformedInput(t, routes, calls);
