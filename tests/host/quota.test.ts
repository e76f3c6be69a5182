import { beforeAll, describe, expect, it } from "vitest";
import { usePlatform } from "../support/platform.js";
import {
  addMember,
  asPerson,
  fresh,
  HOST_ENV,
  hostCall,
  hostSql,
  projectOf,
  seedStaff,
  siteOf,
  StaffRole,
  webToken,
} from "./support.js";

const t = usePlatform({ services: ["host", "network"], env: HOST_ENV });
beforeAll(() => seedStaff(t, { usr_qstaff1: StaffRole.ADMIN, usr_qmod1: StaffRole.GLOBAL_MODERATOR }));

async function owned() {
  const owner = `usr_${fresh("o")}`;
  const as = await asPerson(t, owner);
  return { owner, as, id: await projectOf(as) };
}

describe("reading a quota", () => {
  it("any member reads the caps and the usage: bytes of the deploys kept, those deploys, sites", async () => {
    const { as, id } = await owned();
    const site = await siteOf(as, id);
    await siteOf(as, id);
    // Deploys as the deploy routes leave them: kept (ready, validating) count, failed and deleted keep nothing.
    const rows: [string, string, number][] = [
      ["dep_q1", "ready", 1000],
      ["dep_q2", "validating", 200],
      ["dep_q3", "failed", 50],
      ["dep_q4", "deleted", 7000],
    ];
    for (const [depId, state, bytes] of rows)
      await hostSql(
        t,
        `insert into {deploys} (id, site_id, project_id, state, bytes, created_by, created_at)
          values (?, ?, ?, ?, ?, 'usr_x', now())`,
        [`${depId}${fresh("")}`, site.id, id, state, bytes],
      );
    await addMember(as, id, "usr_qviewer1", "viewer");
    const read = await (await asPerson(t, "usr_qviewer1"))("GET", `/projects/${id}/quota`);
    expect(read.status).toBe(200);
    expect(read.body.usage).toEqual({ storage_bytes: "1200", sites: 2, deploys: 2 });
    expect(read.body.quota.sites).toBe(10);
  });

  it("outsiders meet the 404", async () => {
    const { id } = await owned();
    expect((await (await asPerson(t, `usr_${fresh("x")}`))("GET", `/projects/${id}/quota`)).body.code).toBe(
      "host.project.not_found",
    );
  });
});

describe("changing a quota", () => {
  it("a network staff user sets the fields given; the others keep their values; the same again changes nothing", async () => {
    const { as, id } = await owned();
    const staff = await asPerson(t, "usr_qstaff1");
    const put = await staff("PUT", `/projects/${id}/quota`, { sites: 1, file_bytes: 1024 });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ changed: true, quota: { sites: 1, file_bytes: "1024", deploy_files: 10000 } });
    expect((await staff("PUT", `/projects/${id}/quota`, { sites: 1 })).body.changed ?? false).toBe(false);
    expect((await as("GET", `/projects/${id}/quota`)).body.quota).toMatchObject({ sites: 1, file_bytes: "1024" });
    // Any staff role of network's list is staff here; a service vouching for a staff person too.
    const moderator = await asPerson(t, "usr_qmod1");
    expect((await moderator("PUT", `/projects/${id}/quota`, { sites: 3 })).body.quota.sites).toBe(3);
    const web = hostCall(t, await webToken(t), { "x-pf-subject": "usr_qstaff1" });
    expect((await web("PUT", `/projects/${id}/quota`, { sites: 4 })).body.quota.sites).toBe(4);
  });

  it("a cap lowered below the usage keeps what is there and refuses what would pass it", async () => {
    const { as, id } = await owned();
    await siteOf(as, id);
    await siteOf(as, id);
    await (
      await asPerson(t, "usr_qstaff1")
    )("PUT", `/projects/${id}/quota`, { sites: 1 });
    expect((await as("GET", `/projects/${id}/sites`)).body.sites).toHaveLength(2);
    expect((await as("POST", `/projects/${id}/sites`, { slug: fresh("s") })).body).toMatchObject({
      status: 422,
      code: "host.quota_exceeded",
    });
  });

  it("the project's owner is no staff (403 auth.staff_required); nor a service acting for nobody (403 auth.person_required)", async () => {
    const { as, id } = await owned();
    expect((await as("PUT", `/projects/${id}/quota`, { sites: 50 })).body).toMatchObject({
      status: 403,
      code: "auth.staff_required",
      relation: "host.network_staff",
    });
    expect((await hostCall(t, await webToken(t))("PUT", `/projects/${id}/quota`, { sites: 50 })).body).toMatchObject({
      status: 403,
      code: "auth.person_required",
    });
    // Staff status is network's list, never a header: a service saying X-PF-Staff changes nothing.
    const vouched = hostCall(t, await webToken(t), { "x-pf-subject": `usr_${fresh("o")}`, "x-pf-staff": "1" });
    expect((await vouched("PUT", `/projects/${id}/quota`, { sites: 50 })).body.code).toBe("auth.staff_required");
  });

  it("staff meet a missing project's 404, and a sandbox token is refused on a production project", async () => {
    const staff = await asPerson(t, "usr_qstaff1");
    expect((await staff("PUT", "/projects/prj_00000000000000000000000000/quota", { sites: 1 })).body.code).toBe(
      "host.project.not_found",
    );
    const { id } = await owned();
    const sandbox = await asPerson(t, "usr_qstaff1", "sandbox");
    expect((await sandbox("PUT", `/projects/${id}/quota`, { sites: 1 })).body).toMatchObject({
      status: 403,
      code: "host.sandbox_refused",
    });
  });

  it("values are checked (400 naming the field)", async () => {
    const { id } = await owned();
    const answer = await (await asPerson(t, "usr_qstaff1"))("PUT", `/projects/${id}/quota`, { sites: -1 });
    expect(answer.body).toMatchObject({ status: 400, code: "request.invalid" });
    expect(answer.body.detail).toContain("sites");
  });
});
