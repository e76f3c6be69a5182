import { getOption } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { protoComments } from "../../gen/pf/docs.js";
import { TipsOverlayService } from "../../gen/pf/tips/v1/overlays_pb.js";
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
import { createGoal, creatorId, mintOverlayToken, streamUrl } from "./overlay-support.js";
import { openEventStream } from "../support/sse.js";

/** One valid call per overlay route; the refusals vary only the caller. */
const calls: Record<string, RouteCall> = {
  listOverlayConfigs: { method: "GET", path: "/tips/api/v1/overlay-configs" },
  createOverlayConfig: {
    method: "POST",
    path: "/tips/api/v1/overlay-configs",
    body: { kind: "OVERLAY_KIND_ALERTS", name: "Alerts" },
  },
  getOverlayConfig: { method: "GET", path: "/tips/api/v1/overlay-configs/ovc_1" },
  updateOverlayConfig: { method: "PATCH", path: "/tips/api/v1/overlay-configs/ovc_1", body: { name: "Renamed" } },
  listOverlayTokens: { method: "GET", path: "/tips/api/v1/overlay-tokens" },
  createOverlayToken: {
    method: "POST",
    path: "/tips/api/v1/overlay-tokens",
    body: { scopes: ["OVERLAY_SCOPE_ALERTS"] },
  },
  revokeOverlayToken: { method: "POST", path: "/tips/api/v1/overlay-tokens/ovt_1/revoke" },
  openOverlayStream: { method: "GET", path: "/tips/api/v1/stream?token=ovk_unknown" },
};

const routes = routesOf(TipsOverlayService);
const t = usePlatform({ services: ["tips"] });

describe("every overlay route", () => {
  it("has a call here", () => {
    expect(Object.keys(calls).sort()).toEqual(routes.map((route) => route.name).sort());
  });

  itWithSpec(
    "matches routes.tsv where documented (the 7 overlay rows: method, path, capability, visibility)",
    "tips",
    (rows) => {
      expect(routes).toHaveLength(8);
      const documented = rows.filter(([, , path]) => path.startsWith("/api/v1/overlay-"));
      expect(documented).toHaveLength(7);
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
      expect(undocumented.map(({ binding }) => [binding.verb, binding.template].join(" "))).toEqual([
        "GET /api/v1/stream",
      ]);
    },
  );

  it("marks the stream designed (pf.v1.designed), each comment describing its route", () => {
    const marked = routes.filter((route) => getOption(route.method, designed));
    expect(marked.map((route) => route.name)).toEqual(["openOverlayStream"]);
    for (const route of routes) {
      expect(protoComments[`${TipsOverlayService.typeName}.${route.method.name}`], route.name).toMatch(
        /^(?!Designed)\S/,
      );
    }
  });

  it("acts for a person: a service token with the capability but no X-PF-Subject is 403 auth.person_required", async () => {
    for (const name of [
      "listOverlayConfigs",
      "createOverlayConfig",
      "listOverlayTokens",
      "createOverlayToken",
      "revokeOverlayToken",
    ]) {
      const call = calls[name];
      const route = routes.find((r) => r.name === name)!;
      const token = await t.token({ kind: "service", svc: "web", caps: route.rule.capabilities });
      const answer = await t.http(call.method, call.path, { token, body: call.body });
      expect(answer.body, name).toMatchObject({ status: 403, code: "auth.person_required" });
    }
  });
});

describe("authentication comes first", () => {
  it("an anonymous revoke with a body `{}` answers 401 auth.required, never a word about the body", async () => {
    const answer = await t.http("POST", "/tips/api/v1/overlay-tokens/ovt_1/revoke", { body: {} });
    expect(answer.status).toBe(401);
    expect(answer.body).toMatchObject({ status: 401, code: "auth.required" });
    expect(answer.headers.get("www-authenticate")).toBe("Bearer");
  });
});

describeRefusals(t, routes, calls);
describeMalformedInput(t, routes, calls);

describe("the overlay stream's own refusals (public for enforcement; the service checks the overlay token)", () => {
  it("no token: 401 overlay_token.invalid, problem+json, before any event", async () => {
    const opened = await openEventStream(`${t.gatewayUrl}/tips/api/v1/stream`);
    expect(opened.status).toBe(401);
    expect(opened.headers.get("content-type")).toContain("application/problem+json");
    expect(opened.problem).toMatchObject({ status: 401, code: "overlay_token.invalid" });
  });

  it("an unknown token: 401 overlay_token.invalid", async () => {
    const opened = await openEventStream(streamUrl(t, "ovk_not-a-token"));
    expect(opened.problem).toMatchObject({ status: 401, code: "overlay_token.invalid" });
  });

  it("a revoked token: 401 overlay_token.invalid", async () => {
    const creator = creatorId();
    const { id, secret } = await mintOverlayToken(t, creator, ["OVERLAY_SCOPE_ALERTS"]);
    expect((await openEventStream(streamUrl(t, secret))).status).toBe(200);
    const user = await t.token({ kind: "user", sub: creator });
    expect((await t.http("POST", `/tips/api/v1/overlay-tokens/${id}/revoke`, { token: user })).status).toBe(200);
    const opened = await openEventStream(streamUrl(t, secret));
    expect(opened.problem).toMatchObject({ status: 401, code: "overlay_token.invalid" });
  });

  it("a config of a kind outside the token's scopes: 403 overlay_token.scope; another creator's config: 404", async () => {
    const creator = creatorId();
    const user = await t.token({ kind: "user", sub: creator });
    const goals = await t.http("POST", "/tips/api/v1/overlay-configs", {
      token: user,
      body: { kind: "OVERLAY_KIND_GOALS", name: "Goal", goals: { goal_id: await createGoal(t, creator) } },
    });
    const { secret } = await mintOverlayToken(t, creator, ["OVERLAY_SCOPE_ALERTS"]);
    const wrongScope = await openEventStream(streamUrl(t, secret, { config_id: goals.body.config.id }));
    expect(wrongScope.problem).toMatchObject({ status: 403, code: "overlay_token.scope" });
    const other = await mintOverlayToken(t, creatorId(), ["OVERLAY_SCOPE_ALERTS", "OVERLAY_SCOPE_GOALS"]);
    const notTheirs = await openEventStream(streamUrl(t, other.secret, { config_id: goals.body.config.id }));
    expect(notTheirs.problem).toMatchObject({ status: 404, code: "overlay_config.not_found" });
  });

  it("X-PF-* headers from an anonymous overlay: 403 auth.header_refused", async () => {
    const opened = await openEventStream(streamUrl(t, "ovk_x"), { "x-pf-subject": "usr_a1" });
    expect(opened.problem).toMatchObject({ status: 403, code: "auth.header_refused" });
  });
});
