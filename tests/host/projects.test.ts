import { describe, expect, it } from "vitest";
import { usePlatform } from "../support/platform.js";
import {
  addMember,
  appToken,
  asPerson,
  fresh,
  HOST_ENV,
  hostCall,
  hostEvents,
  projectOf,
  seedStaff,
  siteOf,
  StaffRole,
  webToken,
} from "./support.js";

const t = usePlatform({ services: ["host", "network"], env: HOST_ENV });

describe("creating a project", () => {
  it("a person's own token creates a production project they own, with the default quota", async () => {
    const owner = `usr_${fresh("o")}`;
    const as = await asPerson(t, owner);
    const answer = await as("POST", "/projects", { name: "  My sites  " });
    expect(answer.status).toBe(201);
    expect(answer.body).toMatchObject({
      changed: true,
      project: {
        name: "My sites",
        created_by: owner,
        environment: "ENVIRONMENT_PRODUCTION",
        role: "owner",
        members: [{ principal: owner, role: "owner" }],
      },
    });
    expect(answer.body.project.id).toMatch(/^prj_[0-9a-z]{26}$/);
    const quota = await as("GET", `/projects/${answer.body.project.id}/quota`);
    expect(quota.body.quota).toEqual({
      storage_bytes: String(1024 ** 3),
      deploy_files: 10000,
      deploy_bytes: String(256 * 1024 ** 2),
      file_bytes: String(25 * 1024 ** 2),
      sites: 10,
    });
  });

  it("a service creates it for the person X-PF-Subject names: that person owns it", async () => {
    const owner = `usr_${fresh("o")}`;
    const as = hostCall(t, await webToken(t), { "x-pf-subject": owner });
    const answer = await as("POST", "/projects", { name: "For someone", environment: "ENVIRONMENT_SANDBOX" });
    expect(answer.status).toBe(201);
    expect(answer.body.project).toMatchObject({ created_by: owner, environment: "ENVIRONMENT_SANDBOX" });
  });

  it("apps cannot own projects: an app token, or a service acting for nobody (403 auth.person_required)", async () => {
    for (const token of [await appToken(t, "ci1"), await webToken(t)]) {
      const answer = await hostCall(t, token)("POST", "/projects", { name: "Mine" });
      expect(answer.body).toMatchObject({ status: 403, code: "auth.person_required" });
    }
  });

  it("a guest is no owner (422 host.owner_must_be_person); a name is required and not blank (400)", async () => {
    const guest = hostCall(t, await webToken(t), { "x-pf-subject": "gst_g1" });
    expect((await guest("POST", "/projects", { name: "Mine" })).body).toMatchObject({
      status: 422,
      code: "host.owner_must_be_person",
    });
    const as = await asPerson(t, `usr_${fresh("o")}`);
    expect((await as("POST", "/projects", {})).body).toMatchObject({ status: 400, code: "request.invalid" });
    expect((await as("POST", "/projects", { name: "   " })).body).toMatchObject({ status: 400 });
    expect((await as("POST", "/projects", { name: "x".repeat(101) })).body).toMatchObject({ status: 400 });
  });

  it("a sandbox token creates sandbox projects only: by default, and 403 host.sandbox_refused for production", async () => {
    const as = await asPerson(t, `usr_${fresh("o")}`, "sandbox");
    const made = await as("POST", "/projects", { name: "Try" });
    expect(made.body.project.environment).toBe("ENVIRONMENT_SANDBOX");
    expect((await as("POST", "/projects", { name: "Try", environment: "ENVIRONMENT_PRODUCTION" })).body).toMatchObject({
      status: 403,
      code: "host.sandbox_refused",
    });
  });
});

describe("listing projects", () => {
  it("lists the projects the principal is a member of, newest first, paged with limit and before", async () => {
    const owner = `usr_${fresh("o")}`;
    const as = await asPerson(t, owner);
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(await projectOf(as, { name: `P${i}` }));
    const other = await projectOf(await asPerson(t, `usr_${fresh("o")}`));
    const first = await as("GET", "/projects?limit=2");
    expect(first.body.projects.map((p: { id: string }) => p.id)).toEqual([ids[2], ids[1]]);
    expect(first.body.projects[0].role).toBe("owner");
    expect(first.body.next_before).toBe(ids[1]);
    const second = await as("GET", `/projects?limit=2&before=${first.body.next_before}`);
    expect(second.body.projects.map((p: { id: string }) => p.id)).toEqual([ids[0]]);
    expect(second.body.next_before ?? "").toBe("");
    expect(JSON.stringify(first.body) + JSON.stringify(second.body)).not.toContain(other);
  });

  it("an app token lists the projects it was added to, as itself (app:<id>), with its role", async () => {
    const as = await asPerson(t, `usr_${fresh("o")}`);
    const id = await projectOf(as);
    const app = fresh("ci");
    await addMember(as, id, `app:${app}`, "deployer");
    const listed = await hostCall(t, await appToken(t, app))("GET", "/projects");
    expect(listed.body.projects).toMatchObject([{ id, role: "deployer" }]);
  });

  it("a sandbox token sees sandbox projects only", async () => {
    const owner = `usr_${fresh("o")}`;
    const as = await asPerson(t, owner);
    await projectOf(as);
    const sandbox = await projectOf(as, { environment: "ENVIRONMENT_SANDBOX" });
    expect((await as("GET", "/projects")).body.projects).toHaveLength(2);
    const listed = await (await asPerson(t, owner, "sandbox"))("GET", "/projects");
    expect(listed.body.projects.map((p: { id: string }) => p.id)).toEqual([sandbox]);
  });
});

describe("reading a project", () => {
  it("answers its members (owners first) and the caller's own role", async () => {
    const owner = `usr_${fresh("o")}`;
    const as = await asPerson(t, owner);
    const id = await projectOf(as);
    await addMember(as, id, "usr_viewer1", "viewer");
    await addMember(as, id, "app:ci", "deployer");
    const read = await (await asPerson(t, "usr_viewer1"))("GET", `/projects/${id}`);
    expect(read.status).toBe(200);
    expect(read.body.project).toMatchObject({ id, role: "viewer" });
    expect(read.body.project.members.map((m: { principal: string; role: string }) => [m.principal, m.role])).toEqual([
      [owner, "owner"],
      ["app:ci", "deployer"],
      ["usr_viewer1", "viewer"],
    ]);
  });

  it("one the caller holds no role in, or none at all, answers 404 host.project.not_found alike", async () => {
    const id = await projectOf(await asPerson(t, `usr_${fresh("o")}`));
    const stranger = await asPerson(t, `usr_${fresh("x")}`);
    const theirs = await stranger("GET", `/projects/${id}`);
    const none = await stranger("GET", "/projects/prj_00000000000000000000000000");
    expect(theirs.body).toMatchObject({ status: 404, code: "host.project.not_found" });
    expect(none.body).toMatchObject({ status: 404, code: "host.project.not_found" });
    expect(theirs.body.detail).toBe(none.body.detail);
  });

  it("a sandbox token on a production project is refused (403 host.sandbox_refused), on a sandbox one served", async () => {
    const owner = `usr_${fresh("o")}`;
    const as = await asPerson(t, owner);
    const production = await projectOf(as);
    const sandbox = await projectOf(as, { environment: "ENVIRONMENT_SANDBOX" });
    const inSandbox = await asPerson(t, owner, "sandbox");
    expect((await inSandbox("GET", `/projects/${production}`)).body).toMatchObject({
      status: 403,
      code: "host.sandbox_refused",
    });
    expect((await inSandbox("GET", `/projects/${sandbox}`)).status).toBe(200);
    // A service's sandbox token acting for the owner is refused alike.
    const web = hostCall(t, await webToken(t, "sandbox"), { "x-pf-subject": owner });
    expect((await web("GET", `/projects/${production}/sites`)).body.code).toBe("host.sandbox_refused");
  });
});

describe("deleting a project", () => {
  it("an owner deletes an empty project; it is gone (404) and host.project.deleted is recorded", async () => {
    const owner = `usr_${fresh("o")}`;
    const as = await asPerson(t, owner);
    const id = await projectOf(as);
    const answer = await as("DELETE", `/projects/${id}`);
    expect(answer.body).toMatchObject({ changed: true, project: { id } });
    expect((await as("GET", `/projects/${id}`)).body.code).toBe("host.project.not_found");
    expect((await as("DELETE", `/projects/${id}`)).body.code).toBe("host.project.not_found");
    expect(await hostEvents(t, id)).toMatchObject([{ subject: "host.project.deleted", project_id: id, actor: owner }]);
  });

  it("409 host.project_not_empty while it has sites", async () => {
    const as = await asPerson(t, `usr_${fresh("o")}`);
    const id = await projectOf(as);
    const site = await siteOf(as, id);
    expect((await as("DELETE", `/projects/${id}`)).body).toMatchObject({
      status: 409,
      code: "host.project_not_empty",
    });
    await as("DELETE", `/sites/${site.id}`);
    expect((await as("DELETE", `/projects/${id}`)).status).toBe(200);
  });

  it("409 host.under_review while taken down", async () => {
    await seedStaff(t, { usr_staffp1: StaffRole.GLOBAL_MODERATOR });
    const as = await asPerson(t, `usr_${fresh("o")}`);
    const id = await projectOf(as);
    const staff = await asPerson(t, "usr_staffp1");
    expect((await staff("POST", `/projects/${id}/takedown`, { reason: "review" })).status).toBe(200);
    expect((await as("DELETE", `/projects/${id}`)).body).toMatchObject({ status: 409, code: "host.under_review" });
  });

  it("deployers and viewers may not (403 auth.role_required)", async () => {
    const as = await asPerson(t, `usr_${fresh("o")}`);
    const id = await projectOf(as);
    for (const role of ["deployer", "viewer"]) {
      const member = `usr_${fresh(role.slice(0, 3))}`;
      await addMember(as, id, member, role);
      const answer = await (await asPerson(t, member))("DELETE", `/projects/${id}`);
      expect(answer.body, role).toMatchObject({ status: 403, code: "auth.role_required", relation: "host.project" });
    }
    // An app member-less in it: its 404, as anyone outside.
    const app = await hostCall(t, await appToken(t, "ci"))("DELETE", `/projects/${id}`);
    expect(app.body.code).toBe("host.project.not_found");
  });
});
