import { describe, expect, it } from "vitest";
import { RunService } from "../../gen/pf/run/v1/run_pb.js";
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
import { jobBody } from "./support.js";

/** One valid call per route; the refusals vary only the caller. */
const calls: Record<string, RouteCall> = {
  listAllJobs: { method: "GET", path: "/run/api/v1/admin/jobs" },
  listJobs: { method: "GET", path: "/run/api/v1/jobs" },
  submitJob: { method: "POST", path: "/run/api/v1/jobs", body: jobBody() },
  getJob: { method: "GET", path: "/run/api/v1/jobs/job_1" },
  cancelJob: { method: "POST", path: "/run/api/v1/jobs/job_1/cancel", body: {} },
  streamJob: { method: "GET", path: "/run/api/v1/jobs/job_1/stream" },
  createStreamTicket: { method: "POST", path: "/run/api/v1/jobs/job_1/stream/ticket", body: {} },
};

const routes = routesOf(RunService);
const t = usePlatform({ services: ["run"] });

describe("every run route", () => {
  it("has a call here (7 routes)", () => {
    expect(routes).toHaveLength(7);
    expect(Object.keys(calls).sort()).toEqual(routes.map((route) => route.name).sort());
  });

  itWithSpec("matches routes.tsv exactly (7 routes: method, path, capability, visibility)", "run", (documented) => {
    expect(documented).toHaveLength(7);
    const bound = routes.map(bindingOf);
    // routes.tsv writes the stream's query parameter into its path (`?ticket=<ticket>`).
    for (const [, verb, path, caps, visibility] of documented)
      expect(bound, `${verb} ${path}`).toContainEqual({ verb, template: path.split("?")[0], caps, visibility });
  });
});

describe("whom each run route admits, as declared", () => {
  it("acts for nobody: the project comes from the token, so X-PF-Subject is refused everywhere", () => {
    for (const route of routes) {
      expect(route.actsForPeople, route.name).toBe(false);
      for (const rule of route.rules) expect(Actor[rule.actor], route.name).toBe("UNSPECIFIED");
    }
  });

  it("run.job.admin: the admin list, and an alternative on read and cancel; internal, never to apps or mods", () => {
    const admin = {
      capabilities: ["run.job.admin"],
      visibility: Visibility.INTERNAL,
      neverToApps: true,
      neverToMods: true,
    };
    const byName = new Map(routes.map((route) => [route.name, route]));
    expect(byName.get("listAllJobs")!.rules).toEqual([expect.objectContaining({ ...admin, alternatives: [] })]);
    for (const name of ["getJob", "cancelJob"]) {
      const [main, alternative] = byName.get(name)!.rules;
      expect(main, name).toMatchObject({ visibility: Visibility.PUBLIC, anonymous: false });
      expect(alternative, name).toMatchObject({ ...admin, name: "admin" });
    }
    for (const name of ["listJobs", "submitJob", "streamJob", "createStreamTicket"])
      expect(byName.get(name)!.rules, name).toHaveLength(1);
  });

  it("the stream alone opens without a token (its ticket), limited per client address", () => {
    for (const route of routes) expect(route.rule.anonymous, route.name).toBe(route.name === "streamJob");
    expect(routes.find((route) => route.name === "streamJob")!.rule.rateLimit).toBe("open");
  });
});

describeRefusals(t, routes, calls);
describeMalformedInput(t, routes, calls);
