import { describe, expect, it } from "vitest";
import { AiService } from "../../gen/pf/ai/v1/ai_pb.js";
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

/** Nobody's run: a caller let through is answered its 404 (ai.run.not_found), as for another caller's. */
const RUN = `/ai/api/v1/runs/air_${"0".repeat(24)}`;

/**
 * A direct operation on a routing profile nobody made, with nothing to work on: a caller let through is refused by
 * the service (400 ai.input.invalid or 404 ai.route.not_found) before any run, quota or provider call.
 */
const operation = (name: string): RouteCall => ({
  method: "POST",
  path: `/ai/api/v1/${name}`,
  body: { route: "matrix-none" },
});

/**
 * One valid call per route; the refusals vary only the caller. Each is answered without a change where the service
 * allows it: a workflow, run, provider, model or definition nobody made (404), or a body the handler refuses (400).
 */
const calls: Record<string, RouteCall> = {
  createRun: { method: "POST", path: "/ai/api/v1/runs", body: { workflow: "matrix.none" } },
  chat: operation("chat"),
  classify: operation("classify"),
  embed: operation("embed"),
  enrich: operation("enrich"),
  extract: operation("extract"),
  generate: operation("generate"),
  summarize: operation("summarize"),
  streamChat: operation("chat/stream"),
  getRun: { method: "GET", path: RUN },
  cancelRun: { method: "POST", path: `${RUN}/cancel`, body: {} },
  retryRun: { method: "POST", path: `${RUN}/retry`, body: {} },
  listRuns: { method: "GET", path: "/ai/api/v1/runs" },
  getUsage: { method: "GET", path: "/ai/api/v1/usage" },
  getSummary: { method: "GET", path: "/ai/api/v1/summary" },
  listAudit: { method: "GET", path: "/ai/api/v1/audit" },
  getCacheStats: { method: "GET", path: "/ai/api/v1/cache" },
  // A model named without its provider: 400 naming model, nothing purged.
  purgeCache: { method: "DELETE", path: "/ai/api/v1/cache?model=nomodel" },
  listModels: { method: "GET", path: "/ai/api/v1/models" },
  registerModel: { method: "POST", path: "/ai/api/v1/models", body: { provider: "matrixnone" } },
  updateModel: { method: "PATCH", path: "/ai/api/v1/models/matrixnone/m1", body: {} },
  listProviders: { method: "GET", path: "/ai/api/v1/providers" },
  registerProvider: { method: "POST", path: "/ai/api/v1/providers", body: { kind: "local" } },
  updateProvider: { method: "PATCH", path: "/ai/api/v1/providers/matrixnone", body: {} },
  disableProvider: { method: "POST", path: "/ai/api/v1/providers/matrixnone/disable", body: {} },
  enableProvider: { method: "POST", path: "/ai/api/v1/providers/matrixnone/enable", body: {} },
  resetProvider: { method: "POST", path: "/ai/api/v1/providers/matrixnone/reset", body: {} },
  listQuotas: { method: "GET", path: "/ai/api/v1/quotas" },
  setQuota: { method: "POST", path: "/ai/api/v1/quotas", body: { scope: "caller", window: "minute" } },
  listRequests: { method: "GET", path: "/ai/api/v1/requests" },
  // Bodies their kind refuses (400 ai.definition_invalid): no version is made.
  createRouteVersion: { method: "POST", path: "/ai/api/v1/routes/matrix/versions", body: { body: { targets: [] } } },
  createPromptVersion: { method: "POST", path: "/ai/api/v1/prompts/matrix/versions", body: { body: {} } },
  createWorkflowVersion: {
    method: "POST",
    path: "/ai/api/v1/workflows/matrix.none/versions",
    body: { body: { operation: "dance" } },
  },
  setRouteVersionStatus: {
    method: "POST",
    path: "/ai/api/v1/routes/matrix/versions/1/status",
    body: { status: "active" },
  },
  setPromptVersionStatus: {
    method: "POST",
    path: "/ai/api/v1/prompts/matrix/versions/1/status",
    body: { status: "active" },
  },
  setWorkflowVersionStatus: {
    method: "POST",
    path: "/ai/api/v1/workflows/matrix.none/versions/1/status",
    body: { status: "active" },
  },
  setRouteStatus: { method: "POST", path: "/ai/api/v1/routes/matrix/status", body: { status: "disabled" } },
  listDefinitions: { method: "GET", path: "/ai/api/v1/definitions" },
};

const routes = routesOf(AiService);
const t = usePlatform({ services: ["ai"] });

/** The run routes: first-party, taken by people and by services acting for them. */
const RUN_ROUTES = [
  "createRun",
  "chat",
  "classify",
  "embed",
  "enrich",
  "extract",
  "generate",
  "summarize",
  "streamChat",
  "cancelRun",
  "retryRun",
];

describe("ai access", () => {
  it("lists one call per route (38)", () => {
    expect(routes).toHaveLength(38);
    expect(Object.keys(calls).sort()).toEqual(routes.map((route) => route.name).sort());
  });

  // The seed documents 25 of the routes (the rest are designed: README); each documented one is bound as written.
  itWithSpec(
    "matches routes.tsv (every documented route: method, path, capability, visibility)",
    "ai",
    (documented) => {
      expect(documented).toHaveLength(25);
      const bound = routes.map(bindingOf);
      for (const [, verb, path, caps, visibility] of documented)
        expect(bound, `${verb} ${path}`).toContainEqual({ verb, template: path, caps, visibility });
    },
  );

  it("runs are first-party and act for people; every other route is internal, one rule each but GetRun's two", () => {
    for (const route of routes.filter((each) => each.name !== "getRun")) {
      expect(route.rules, route.name).toHaveLength(1);
      const run = RUN_ROUTES.includes(route.name);
      expect(route.rule.visibility, route.name).toBe(run ? Visibility.FIRST_PARTY : Visibility.INTERNAL);
      expect(route.rule.actingSubject, route.name).toBe(run);
    }
    // Any run to a usage reader; their own to whoever may create runs.
    const getRun = routes.find((route) => route.name === "getRun")!;
    expect(getRun.rules.map((rule) => [rule.name, rule.capabilities, rule.visibility, rule.actingSubject])).toEqual([
      ["any", ["ai.run.read"], Visibility.INTERNAL, false],
      ["own", ["ai.run.create"], Visibility.FIRST_PARTY, true],
    ]);
  });
});

describeRefusals(t, routes, calls);
describeMalformedInput(t, routes, calls);
