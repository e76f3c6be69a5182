import { beforeAll, describe, expect, it } from "vitest";
import { usePlatform } from "../support/platform.js";
import {
  addMember,
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
beforeAll(() => seedStaff(t, { usr_tstaff1: StaffRole.OWNER }));

async function owned() {
  const owner = `usr_${fresh("o")}`;
  const as = await asPerson(t, owner);
  const id = await projectOf(as);
  return { owner, as, id, site: await siteOf(as, id) };
}

describe("a site's takedown", () => {
  it("records who, why and when, and host.site.taken_down; a second changes nothing; a lift clears it", async () => {
    const { as, id, site } = await owned();
    const staff = await asPerson(t, "usr_tstaff1");
    const down = await staff("POST", `/sites/${site.id}/takedown`, { reason: "  Phishing report  " });
    expect(down.status).toBe(200);
    expect(down.body).toMatchObject({
      changed: true,
      site: { takedown: { by: "usr_tstaff1", reason: "Phishing report" } },
    });
    expect(down.body.site.takedown.at).toBeTruthy();
    const again = await staff("POST", `/sites/${site.id}/takedown`, { reason: "Other" });
    expect(again.body.changed ?? false).toBe(false);
    expect(again.body.site.takedown).toEqual(down.body.site.takedown);
    // Members see it on their read.
    expect((await as("GET", `/sites/${site.id}`)).body.site.takedown.reason).toBe("Phishing report");
    const lifted = await staff("DELETE", `/sites/${site.id}/takedown`);
    expect(lifted.body.changed).toBe(true);
    expect(lifted.body.site.takedown).toBeUndefined();
    expect((await staff("DELETE", `/sites/${site.id}/takedown`)).body.changed ?? false).toBe(false);
    expect((await hostEvents(t, site.id)).map((event) => [event.subject, event.actor, event.project_id])).toEqual([
      ["host.site.created", expect.any(String), id],
      ["host.site.taken_down", "usr_tstaff1", id],
      ["host.site.restored", "usr_tstaff1", id],
    ]);
  });

  it("a reason is required (400 naming reason)", async () => {
    const { site } = await owned();
    const answer = await (await asPerson(t, "usr_tstaff1"))("POST", `/sites/${site.id}/takedown`, {});
    expect(answer.body).toMatchObject({ status: 400, code: "request.invalid" });
    expect(answer.body.detail).toContain("reason");
  });
});

describe("a project's takedown", () => {
  it("records who, why and when, and host.project.taken_down; a second changes nothing; a lift clears it", async () => {
    const { as, id } = await owned();
    const staff = await asPerson(t, "usr_tstaff1");
    const down = await staff("POST", `/projects/${id}/takedown`, { reason: "Malware" });
    expect(down.body).toMatchObject({
      changed: true,
      project: { id, takedown: { by: "usr_tstaff1", reason: "Malware" } },
    });
    expect((await staff("POST", `/projects/${id}/takedown`, { reason: "x" })).body.changed ?? false).toBe(false);
    expect((await as("GET", `/projects/${id}`)).body.project.takedown.reason).toBe("Malware");
    const lifted = await staff("DELETE", `/projects/${id}/takedown`);
    expect(lifted.body.changed).toBe(true);
    expect(lifted.body.project.takedown).toBeUndefined();
    const subjects = (await hostEvents(t, id))
      .map((event) => event.subject)
      .filter((s) => String(s).startsWith("host.project"));
    expect(subjects).toEqual(["host.project.taken_down", "host.project.restored"]);
  });
});

describe("who may take down", () => {
  it("the project's own owner is no staff (403 auth.staff_required), nor a service saying X-PF-Staff", async () => {
    const { owner, as, id, site } = await owned();
    const web = hostCall(t, await webToken(t), { "x-pf-subject": owner, "x-pf-staff": "1" });
    for (const call of [as, web]) {
      for (const [method, path] of [
        ["POST", `/sites/${site.id}/takedown`],
        ["DELETE", `/sites/${site.id}/takedown`],
        ["POST", `/projects/${id}/takedown`],
        ["DELETE", `/projects/${id}/takedown`],
      ] as const) {
        const answer = await call(method, path, method === "POST" ? { reason: "x" } : undefined);
        expect(answer.body, path).toMatchObject({ status: 403, code: "auth.staff_required" });
      }
    }
  });

  it("staff acting through a service; staff meet a missing site's 404", async () => {
    const { site } = await owned();
    const web = hostCall(t, await webToken(t), { "x-pf-subject": "usr_tstaff1" });
    expect((await web("POST", `/sites/${site.id}/takedown`, { reason: "x" })).body.changed).toBe(true);
    expect((await web("POST", "/sites/sit_00000000000000000000000000/takedown", { reason: "x" })).body.code).toBe(
      "host.site.not_found",
    );
  });

  it("an app, even a member, or a service acting for nobody never takes down (403 auth.person_required)", async () => {
    const { as, id, site } = await owned();
    await addMember(as, id, "app:ci", "deployer");
    const app = await t.token({ kind: "app", app_id: "ci", caps: ["host.site.manage"], fp: true });
    for (const token of [app, await webToken(t)])
      expect((await hostCall(t, token)("POST", `/sites/${site.id}/takedown`, { reason: "x" })).body.code).toBe(
        "auth.person_required",
      );
  });
});
