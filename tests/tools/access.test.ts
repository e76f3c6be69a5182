import { describe, expect, it } from "vitest";
import { ToolsService } from "../../gen/pf/tools/v1/tools_pb.js";
import { Cors } from "../../gen/pf/v1/options_pb.js";
import { authClassOf, type AuthClass } from "../../services/tools/catalogue/descriptor.js";
import { Catalogue } from "../../services/tools/catalogue/index.js";
import {
  bindingOf,
  describeMalformedInput,
  describeRefusals,
  itWithSpec,
  routesOf,
  type Route,
  type RouteCall,
} from "../support/access.js";
import { usePlatform } from "../support/platform.js";

/** An available tool of an auth class that the run API exposes, chosen at test time: the catalogue grows. */
function toolOf(auth: AuthClass): string {
  const tool = new Catalogue().tools.find(
    (each) => each.catalogue === "available" && each.api && authClassOf(each) === auth,
  );
  if (!tool) throw new Error(`the catalogue holds no available ${auth} tool with an API`);
  return tool.id;
}

/**
 * A run of a tool of the class: an input no tool's schema takes (each closes its properties), so a call let through
 * is refused by the handler (400 tools.input.invalid) before anything runs: no quota, no job, no probe sent.
 */
const runOf = (auth: AuthClass): RouteCall => ({
  method: "POST",
  path: `/tools/api/v1/tools/${toolOf(auth)}/run`,
  body: { input: { "not-a-member": true } },
  roles: { tool: auth },
});

/** Nobody's job: a caller let through is answered its 404 (tools.job.not_found), as for another caller's. */
const JOB = `/tools/api/v1/jobs/job_${"0".repeat(24)}`;
const REF = "blog:post:pst_matrix";

/** One valid call per route; the refusals vary only the caller. The run names a signed_in tool. */
const calls: Record<string, RouteCall> = {
  listTools: { method: "GET", path: "/tools/api/v1/tools" },
  getTool: { method: "GET", path: `/tools/api/v1/tools/${toolOf("anonymous")}` },
  getToolSchema: { method: "GET", path: `/tools/api/v1/tools/${toolOf("anonymous")}/schema` },
  runTool: runOf("signed_in"),
  // A JSON job naming a media object nobody stored, with an input no tool takes.
  createJob: {
    method: "POST",
    path: "/tools/api/v1/jobs",
    body: { tool: toolOf("signed_in"), input: { "not-a-member": true }, media_keys: ["A".repeat(24)] },
  },
  getJob: { method: "GET", path: JOB },
  cancelJob: { method: "DELETE", path: JOB },
  watchJob: { method: "GET", path: `${JOB}/events` },
  readJobFile: { method: "GET", path: `${JOB}/files/1` },
  putReference: { method: "PUT", path: `${JOB}/references/${REF}`, body: {} },
  deleteReference: { method: "DELETE", path: `${JOB}/references/${REF}` },
  retryJob: { method: "POST", path: `${JOB}/retry`, body: {} },
};

const routes = routesOf(ToolsService);
const routeNamed = (name: string): Route => routes.find((route) => route.name === name)!;
const t = usePlatform({ services: ["tools", "media"] });

const REGISTRY = ["listTools", "getTool", "getToolSchema"];

describe("tools access", () => {
  it("lists one call per route (12)", () => {
    expect(routes).toHaveLength(12);
    expect(Object.keys(calls).sort()).toEqual(routes.map((route) => route.name).sort());
  });

  /**
   * routes.tsv writes the run route's two kinds of caller as `<capability> (<visibility>)` each: its main rule's
   * and its probe alternative's.
   */
  itWithSpec("matches routes.tsv exactly (12 routes: method, path, capability, visibility)", "tools", (documented) => {
    expect(documented).toHaveLength(12);
    const bound = routes.map((route) => {
      const binding = bindingOf(route);
      if (route.rules.length === 1) return binding;
      const kinds = route.rules.map(
        (rule) => `${rule.capabilities.join(",")} (${bindingOf({ ...route, rule }).visibility})`,
      );
      return { ...binding, caps: [...new Set(kinds)].join("; ") };
    });
    for (const [, verb, path, caps, visibility] of documented)
      expect(bound, `${verb} ${path}`).toContainEqual({ verb, template: path, caps, visibility });
  });

  it("the registry is open to anonymous callers from any origin, counted by the read limit", () => {
    for (const name of REGISTRY) {
      const route = routeNamed(name);
      expect(route.rules, name).toHaveLength(1);
      expect(route.rule, name).toMatchObject({
        anonymous: true,
        cors: Cors.OPEN,
        rateLimit: "read",
        capabilities: ["tools.tool.read"],
      });
    }
    // Only the registry: every other route keeps the platform's origins.
    const open = routes.filter((route) => route.rules.some((rule) => rule.cors === Cors.OPEN)).map((each) => each.name);
    expect(open.sort()).toEqual([...REGISTRY].sort());
  });

  it("jobs take no anonymous caller and act for the person a service names", () => {
    const jobs = routes.filter((route) => !REGISTRY.includes(route.name) && route.name !== "runTool");
    expect(jobs).toHaveLength(8);
    for (const route of jobs) {
      expect(route.rules, route.name).toHaveLength(1);
      expect(route.rule, route.name).toMatchObject({ anonymous: false, actingSubject: true });
      expect(route.rule.relation, route.name).toBeUndefined();
    }
  });

  it("RunTool's three rules: by the tool's class (the `tool` relation, of the object), anonymous, signed_in, probe", () => {
    const run = routeNamed("runTool");
    expect(run.relations).toEqual([
      expect.objectContaining({ name: "tool", refusal: "tools.probe_refused", ofObject: true }),
    ]);
    const rules = run.rules.map((rule) => ({
      name: rule.name,
      capabilities: rule.capabilities,
      visibility: bindingOf({ ...run, rule }).visibility,
      anonymous: rule.anonymous,
      noPeople: rule.noPeople,
      actingSubject: rule.actingSubject,
      relation: { name: rule.relation?.name, scope: rule.relation?.scopeField, roles: rule.relation?.roles },
    }));
    const relation = (roles: string[]) => ({ name: "tool", scope: "id", roles });
    expect(rules).toEqual([
      {
        name: "anonymous",
        capabilities: ["tools.tool.run"],
        visibility: "public",
        anonymous: true,
        noPeople: false,
        actingSubject: true,
        relation: relation(["anonymous"]),
      },
      {
        name: "signed_in",
        capabilities: ["tools.tool.run"],
        visibility: "public",
        anonymous: false,
        noPeople: false,
        actingSubject: true,
        relation: relation(["anonymous", "signed_in"]),
      },
      {
        name: "probe",
        capabilities: ["tools.net.probe"],
        visibility: "partner",
        anonymous: false,
        noPeople: true,
        actingSubject: false,
        relation: relation(["probe"]),
      },
    ]);
  });
});

describeRefusals(t, routes, calls);
describeMalformedInput(t, routes, calls);

// The run route admits by the class of the tool it names: the matrix again on the two other classes.
describe("on an anonymous tool", () => {
  describeRefusals(t, [routeNamed("runTool")], { runTool: runOf("anonymous") });
});
describe("on a probe tool", () => {
  describeRefusals(t, [routeNamed("runTool")], { runTool: runOf("probe") });
  describeMalformedInput(t, [routeNamed("runTool")], { runTool: runOf("probe") });
});
