import { getOption } from "@bufbuild/protobuf";
import { beforeAll, describe, expect, it } from "vitest";
import { HostService } from "../../gen/pf/host/v1/host_pb.js";
import { Actor, designed as designedOption } from "../../gen/pf/v1/options_pb.js";
import {
  bindingOf,
  describeMalformedInput,
  describeRefusals,
  itWithSpec,
  routesOf,
  type Outsiders,
  type RouteCall,
} from "../support/access.js";
import { usePlatform } from "../support/platform.js";
import { addMember, asPerson, fresh, HOST_ENV, hostSql, projectOf, seedStaff, siteOf, StaffRole } from "./support.js";

/**
 * The objects the matrix calls, made before it: usr_a1 and usr_b1 own every project (and are network staff), the
 * OUTSIDER holds no role. Routes that delete or take down have objects of their own, so the others keep theirs.
 */
const at = {
  project: "",
  doomedProject: "",
  reviewed: "",
  site: "",
  doomedSite: "",
  reviewedSite: "",
  deploy: "",
  doomedDeploy: "",
  domain: "",
  doomedDomain: "",
};

const call = (method: string, path: () => string, body?: unknown, headers?: Record<string, string>): RouteCall => ({
  method,
  get path() {
    return `/host/api/v1${path()}`;
  },
  body,
  headers,
});

const TAR = { "content-type": "application/x-tar" };

/** One valid call per route; the refusals vary only the caller. */
const calls: Record<string, RouteCall> = {
  listProjects: call("GET", () => "/projects"),
  createProject: call("POST", () => "/projects", { name: "Matrix" }),
  getProject: call("GET", () => `/projects/${at.project}`),
  deleteProject: call("DELETE", () => `/projects/${at.doomedProject}`),
  putMember: call("PUT", () => `/projects/${at.project}/members/usr_m1`, { role: "viewer" }),
  deleteMember: call("DELETE", () => `/projects/${at.project}/members/usr_m2`),
  getQuota: call("GET", () => `/projects/${at.project}/quota`),
  putQuota: call("PUT", () => `/projects/${at.project}/quota`, { sites: 20 }),
  listSites: call("GET", () => `/projects/${at.project}/sites`),
  createSite: call("POST", () => `/projects/${at.project}/sites`, { slug: "matrix-site" }),
  getSite: call("GET", () => `/sites/${at.site}`),
  deleteSite: call("DELETE", () => `/sites/${at.doomedSite}`),
  takeDownSite: call("POST", () => `/sites/${at.reviewedSite}/takedown`, { reason: "review" }),
  restoreSite: call("DELETE", () => `/sites/${at.reviewedSite}/takedown`),
  takeDownProject: call("POST", () => `/projects/${at.reviewed}/takedown`, { reason: "review" }),
  restoreProject: call("DELETE", () => `/projects/${at.reviewed}/takedown`),
  // An empty tar: two zero blocks.
  uploadDeploy: call("POST", () => `/sites/${at.site}/deploys`, "\0".repeat(1024), TAR),
  listDeploys: call("GET", () => `/sites/${at.site}/deploys`),
  getDeploy: call("GET", () => `/deploys/${at.deploy}`),
  deleteDeploy: call("DELETE", () => `/deploys/${at.doomedDeploy}`),
  activateDeploy: call("POST", () => `/deploys/${at.deploy}/activate`, {}),
  getDeployLog: call("GET", () => `/deploys/${at.deploy}/log`),
  addDomain: call("POST", () => `/sites/${at.site}/domains`, { hostname: "matrix.example.com" }),
  listDomains: call("GET", () => `/sites/${at.site}/domains`),
  getDomain: call("GET", () => `/domains/${at.domain}`),
  verifyDomain: call("POST", () => `/domains/${at.domain}/verify`, {}),
  deleteDomain: call("DELETE", () => `/domains/${at.doomedDomain}`),
};

/** Who holds no role in a project meets the 404 of the object the path names, as a missing one. */
const NOT_FOUND: Record<string, string> = {
  prj: "host.project.not_found",
  sit: "host.site.not_found",
  dep: "host.deploy.not_found",
  dom: "host.domain.not_found",
};
const outsiders: Outsiders = {
  project: (route) => {
    const kind = /\/(projects|sites|deploys|domains)\//.exec(calls[route.name].path)![1];
    return { status: 404, code: NOT_FOUND[{ projects: "prj", sites: "sit", deploys: "dep", domains: "dom" }[kind]!] };
  },
};

const routes = routesOf(HostService);
const t = usePlatform({
  services: ["host", "network"],
  // Verification asks a DNS server that is not there, and gives up soon.
  env: { ...HOST_ENV, PF_HOST_DNS_SERVERS: "127.0.0.1:9", PF_HOST_DNS_TIMEOUT_MS: "200" },
});

/** A deploy row as an upload leaves it, ready. */
async function readyDeploy(projectId: string, siteId: string): Promise<string> {
  const id = `dep_${fresh("m")}`;
  await hostSql(
    t,
    `insert into {deploys} (id, site_id, project_id, state, files, bytes, created_by, created_at, validated_at)
      values (?, ?, ?, 'ready', 0, 0, 'usr_a1', now(), now())`,
    [id, siteId, projectId],
  );
  return id;
}

/** A pending domain row as AddDomain leaves it. */
async function pendingDomain(projectId: string, siteId: string): Promise<string> {
  const id = `dom_${fresh("m")}`;
  await hostSql(
    t,
    `insert into {domains} (id, site_id, project_id, hostname, token, status, created_at)
      values (?, ?, ?, ?, 'token', 'pending', now())`,
    [id, siteId, projectId, `${fresh("d")}.example.com`],
  );
  return id;
}

beforeAll(async () => {
  await seedStaff(t, { usr_a1: StaffRole.ADMIN, usr_b1: StaffRole.ADMIN });
  const as = await asPerson(t, "usr_a1");
  const owned = async () => {
    const id = await projectOf(as);
    await addMember(as, id, "usr_b1", "owner");
    return id;
  };
  [at.project, at.doomedProject, at.reviewed] = [await owned(), await owned(), await owned()];
  const doomedSites = await owned();
  at.site = (await siteOf(as, at.project)).id;
  at.doomedSite = (await siteOf(as, doomedSites)).id;
  at.reviewedSite = (await siteOf(as, at.reviewed)).id;
  at.deploy = await readyDeploy(at.project, at.site);
  at.doomedDeploy = await readyDeploy(at.project, at.site);
  at.domain = await pendingDomain(at.project, at.site);
  at.doomedDomain = await pendingDomain(at.project, at.site);
  await addMember(as, at.project, "usr_m2", "viewer");
});

describe("every host route", () => {
  it("has a call here (15 documented routes and 12 designed)", () => {
    expect(routes).toHaveLength(27);
    expect(Object.keys(calls).sort()).toEqual(routes.map((route) => route.name).sort());
  });

  itWithSpec("matches routes.tsv where documented; the other 12 are marked designed", "host", (documented) => {
    expect(documented).toHaveLength(15);
    const bound = routes.map((route) => ({ route, binding: bindingOf(route) }));
    for (const [, verb, path, caps, visibility] of documented)
      expect(
        bound.map(({ binding }) => binding),
        `${verb} ${path}`,
      ).toContainEqual({ verb, template: path, caps, visibility });
    for (const { route, binding } of bound) {
      const isDocumented = documented.some(([, verb, path]) => verb === binding.verb && path === binding.template);
      expect(getOption(route.method, designedOption), route.name).toBe(!isDocumented);
    }
  });
});

describe("whom each host route admits, as declared", () => {
  it("every route is first-party and acts for a person or an app as itself; all but create and list by the project role", () => {
    const roles: Record<string, string[]> = {};
    for (const route of routes) {
      expect(route.rules, route.name).toHaveLength(1);
      expect(route.rule, route.name).toMatchObject({ actingSubject: true, anonymous: false });
      expect(bindingOf(route).visibility, route.name).toBe("first-party");
      const relation = route.rule.relation;
      if (relation) roles[route.name] = relation.name === "project" ? relation.roles : [relation.name];
    }
    const any = ["owner", "deployer", "viewer"];
    const deploys = ["owner", "deployer"];
    expect(roles).toEqual({
      getProject: any,
      deleteProject: ["owner"],
      putMember: ["owner"],
      deleteMember: ["owner"],
      getQuota: any,
      putQuota: ["network_staff"],
      listSites: any,
      createSite: ["owner"],
      getSite: any,
      deleteSite: ["owner"],
      takeDownSite: ["network_staff"],
      restoreSite: ["network_staff"],
      takeDownProject: ["network_staff"],
      restoreProject: ["network_staff"],
      uploadDeploy: deploys,
      listDeploys: deploys,
      getDeploy: deploys,
      deleteDeploy: deploys,
      activateDeploy: deploys,
      getDeployLog: deploys,
      addDomain: ["owner"],
      listDomains: any,
      getDomain: any,
      verifyDomain: ["owner"],
      deleteDomain: ["owner"],
    });
    // A person creates projects; staff act as themselves.
    const persons = routes.filter((route) => route.rule.actor === Actor.PERSON).map((route) => route.name);
    expect(persons.sort()).toEqual(
      ["createProject", "putQuota", "takeDownSite", "restoreSite", "takeDownProject", "restoreProject"].sort(),
    );
    expect(routes[0].relations).toEqual([
      expect.objectContaining({ name: "project", refusal: "auth.role_required", heldByApps: true }),
      expect.objectContaining({ name: "network_staff", refusal: "auth.staff_required", heldByApps: false }),
    ]);
  });
});

describeRefusals(t, routes, calls, {}, outsiders);
describeMalformedInput(t, routes, calls);
