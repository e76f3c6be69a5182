import { describe, expect, it } from "vitest";
import { usePlatform } from "../support/platform.js";
import { addMember, appToken, asPerson, fresh, HOST_ENV, hostCall, projectOf, siteOf, webToken } from "./support.js";

const t = usePlatform({ services: ["host"], env: HOST_ENV });

/** A fresh owner's call and project. */
async function owned() {
  const owner = `usr_${fresh("o")}`;
  const as = await asPerson(t, owner);
  return { owner, as, id: await projectOf(as) };
}

describe("putting a member", () => {
  it("an owner adds a person or an app, then changes their role; putting the same role changes nothing", async () => {
    const { as, id } = await owned();
    const added = await as("PUT", `/projects/${id}/members/usr_m1`, { role: "viewer" });
    expect(added.body).toMatchObject({ changed: true, member: { principal: "usr_m1", role: "viewer" } });
    const again = await as("PUT", `/projects/${id}/members/usr_m1`, { role: "viewer" });
    expect(again.body).toMatchObject({ member: { role: "viewer", added_at: added.body.member.added_at } });
    expect(again.body.changed ?? false).toBe(false);
    const raised = await as("PUT", `/projects/${id}/members/usr_m1`, { role: "deployer" });
    expect(raised.body).toMatchObject({ changed: true, member: { role: "deployer" } });
    expect((await as("PUT", `/projects/${id}/members/app:ci.bot-1`, { role: "deployer" })).status).toBe(200);
    const members = (await as("GET", `/projects/${id}`)).body.project.members;
    expect(members.map((m: { principal: string }) => m.principal)).toContain("app:ci.bot-1");
  });

  it("an app is never an owner (422 host.owner_must_be_person)", async () => {
    const { as, id } = await owned();
    expect((await as("PUT", `/projects/${id}/members/app:ci`, { role: "owner" })).body).toMatchObject({
      status: 422,
      code: "host.owner_must_be_person",
    });
  });

  it("the last owner cannot step down (409 host.last_owner); with a second owner they can", async () => {
    const { owner, as, id } = await owned();
    expect((await as("PUT", `/projects/${id}/members/${owner}`, { role: "deployer" })).body).toMatchObject({
      status: 409,
      code: "host.last_owner",
    });
    await addMember(as, id, "usr_second1", "owner");
    expect((await as("PUT", `/projects/${id}/members/${owner}`, { role: "viewer" })).body.member.role).toBe("viewer");
    // Now a viewer, the former owner manages no member.
    expect((await as("PUT", `/projects/${id}/members/usr_m2`, { role: "viewer" })).body).toMatchObject({
      status: 403,
      code: "auth.role_required",
    });
  });

  it("roles, principals and the role are checked (400 naming the field)", async () => {
    const { as, id } = await owned();
    const bad = await as("PUT", `/projects/${id}/members/usr_m1`, { role: "admin" });
    expect(bad.body).toMatchObject({ status: 400, code: "request.invalid" });
    expect(bad.body.detail).toContain("role");
    expect((await as("PUT", `/projects/${id}/members/svc:web`, { role: "viewer" })).status).toBe(400);
  });

  it("deployers and viewers manage no member (403 auth.role_required); outsiders meet the 404", async () => {
    const { as, id } = await owned();
    for (const role of ["deployer", "viewer"]) {
      const member = `usr_${fresh(role.slice(0, 3))}`;
      await addMember(as, id, member, role);
      const answer = await (await asPerson(t, member))("PUT", `/projects/${id}/members/usr_m3`, { role: "viewer" });
      expect(answer.body, role).toMatchObject({ status: 403, code: "auth.role_required", roles: ["owner"] });
    }
    const outsider = await asPerson(t, `usr_${fresh("x")}`);
    expect((await outsider("PUT", `/projects/${id}/members/usr_m3`, { role: "viewer" })).body).toMatchObject({
      status: 404,
      code: "host.project.not_found",
    });
  });

  it("a service acting for an owner manages members; acting for nobody it holds no role (403)", async () => {
    const { owner, id } = await owned();
    const web = await webToken(t);
    const forOwner = hostCall(t, web, { "x-pf-subject": owner });
    expect((await forOwner("PUT", `/projects/${id}/members/usr_m4`, { role: "viewer" })).status).toBe(200);
    expect((await hostCall(t, web)("PUT", `/projects/${id}/members/usr_m5`, { role: "viewer" })).body).toMatchObject({
      status: 403,
      code: "auth.role_required",
    });
  });
});

describe("an app added as deployer (CI)", () => {
  it("acts as itself by its role: reads and lists; as deployer it manages neither members nor sites", async () => {
    const { as, id } = await owned();
    const app = fresh("ci");
    await addMember(as, id, `app:${app}`, "deployer");
    const site = await siteOf(as, id);
    const ci = hostCall(t, await appToken(t, app));
    expect((await ci("GET", `/projects/${id}`)).body.project.role).toBe("deployer");
    expect((await ci("GET", `/sites/${site.id}`)).status).toBe(200);
    for (const [method, path, body] of [
      ["PUT", `/projects/${id}/members/usr_m6`, { role: "viewer" }],
      ["POST", `/projects/${id}/sites`, { slug: fresh("ci") }],
      ["DELETE", `/sites/${site.id}`, undefined],
    ] as const)
      expect((await ci(method, path, body)).body, path).toMatchObject({ status: 403, code: "auth.role_required" });
  });

  it("an app in no project meets the object's 404; a third-party app is refused by the visibility (403)", async () => {
    const { as, id } = await owned();
    await addMember(as, id, "app:thirdparty", "deployer");
    expect((await hostCall(t, await appToken(t, "elsewhere"))("GET", `/projects/${id}`)).body.code).toBe(
      "host.project.not_found",
    );
    expect((await hostCall(t, await appToken(t, "thirdparty", false))("GET", `/projects/${id}`)).body).toMatchObject({
      status: 403,
      code: "auth.first_party_only",
    });
  });
});

describe("removing a member", () => {
  it("an owner removes a member; removing someone who is no member changes nothing", async () => {
    const { as, id } = await owned();
    await addMember(as, id, "usr_gone1", "viewer");
    const removed = await as("DELETE", `/projects/${id}/members/usr_gone1`);
    expect(removed.body).toMatchObject({ changed: true, member: { principal: "usr_gone1", role: "viewer" } });
    const again = await as("DELETE", `/projects/${id}/members/usr_gone1`);
    expect(again.status).toBe(200);
    expect(again.body.changed ?? false).toBe(false);
    expect((await (await asPerson(t, "usr_gone1"))("GET", `/projects/${id}`)).body.code).toBe("host.project.not_found");
  });

  it("the last owner stays (409 host.last_owner); one of two owners may leave", async () => {
    const { owner, as, id } = await owned();
    expect((await as("DELETE", `/projects/${id}/members/${owner}`)).body).toMatchObject({
      status: 409,
      code: "host.last_owner",
    });
    await addMember(as, id, "usr_heir1", "owner");
    expect((await as("DELETE", `/projects/${id}/members/${owner}`)).body.changed).toBe(true);
    const heir = await asPerson(t, "usr_heir1");
    expect((await heir("DELETE", `/projects/${id}/members/usr_heir1`)).body.code).toBe("host.last_owner");
  });

  it("two owners stepping down at once leave one owner", async () => {
    const { owner, as, id } = await owned();
    await addMember(as, id, "usr_twin1", "owner");
    const twin = await asPerson(t, "usr_twin1");
    const answers = await Promise.all([
      as("DELETE", `/projects/${id}/members/${owner}`),
      twin("DELETE", `/projects/${id}/members/usr_twin1`),
    ]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409]);
  });
});
