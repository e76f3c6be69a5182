import { beforeAll, describe, expect, it } from "vitest";
import { RESERVED_SLUGS } from "../../services/host/domain/slugs.js";
import { usePlatform } from "../support/platform.js";
import {
  addMember,
  asPerson,
  fresh,
  HOST_ENV,
  hostContext,
  hostEvents,
  hostSql,
  projectOf,
  seedStaff,
  siteOf,
  StaffRole,
} from "./support.js";

const t = usePlatform({ services: ["host", "network"], env: HOST_ENV });
beforeAll(() => seedStaff(t, { usr_sstaff1: StaffRole.ADMIN }));

async function owned() {
  const owner = `usr_${fresh("o")}`;
  const as = await asPerson(t, owner);
  return { owner, as, id: await projectOf(as) };
}

describe("creating a site", () => {
  it("an owner creates a site served at http://<slug>.<sites domain>:<port>/, recorded as host.site.created", async () => {
    const { owner, as, id } = await owned();
    const slug = fresh("my-site-");
    const answer = await as("POST", `/projects/${id}/sites`, { slug });
    expect(answer.status).toBe(201);
    const { sitesDomain, sitesPort } = hostContext(t).settings;
    expect(answer.body).toMatchObject({
      changed: true,
      site: { project_id: id, slug, url: `http://${slug}.${sitesDomain}:${sitesPort}/` },
    });
    expect(answer.body.site.id).toMatch(/^sit_/);
    expect(answer.body.site.active_deploy_id ?? "").toBe("");
    expect(await hostEvents(t, answer.body.site.id)).toMatchObject([
      { subject: "host.site.created", project_id: id, site_id: answer.body.site.id, actor: owner },
    ]);
  });

  it("a slug is unique platform-wide (409 host.slug_taken), and the reserved ones are taken", async () => {
    const { as, id } = await owned();
    const { slug } = await siteOf(as, id);
    const other = await owned();
    expect((await other.as("POST", `/projects/${other.id}/sites`, { slug })).body).toMatchObject({
      status: 409,
      code: "host.slug_taken",
    });
    expect(RESERVED_SLUGS.size).toBe(22);
    for (const reserved of ["www", "api", "admin", "pf"])
      expect((await as("POST", `/projects/${id}/sites`, { slug: reserved })).body.code, reserved).toBe(
        "host.slug_taken",
      );
  });

  it("two projects creating one slug at once: one site, the other 409", async () => {
    const [a, b] = [await owned(), await owned()];
    const slug = fresh("race");
    const answers = await Promise.all([
      a.as("POST", `/projects/${a.id}/sites`, { slug }),
      b.as("POST", `/projects/${b.id}/sites`, { slug }),
    ]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 409]);
  });

  it("slugs are 1 to 63 of a-z 0-9 -, not starting or ending with - (400 naming slug)", async () => {
    const { as, id } = await owned();
    for (const slug of ["-a", "a-", "A", "a_b", "a".repeat(64), ""]) {
      const answer = await as("POST", `/projects/${id}/sites`, { slug });
      expect(answer.body, slug).toMatchObject({ status: 400, code: "request.invalid" });
    }
    expect((await as("POST", `/projects/${id}/sites`, { slug: `${"a".repeat(62)}b` })).status).toBe(201);
  });

  it("past the project's site quota: 422 host.quota_exceeded; two at once cannot both pass it", async () => {
    const { as, id } = await owned();
    await (
      await asPerson(t, "usr_sstaff1")
    )("PUT", `/projects/${id}/quota`, { sites: 1 });
    const answers = await Promise.all([
      as("POST", `/projects/${id}/sites`, { slug: fresh("q") }),
      as("POST", `/projects/${id}/sites`, { slug: fresh("q") }),
    ]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 422]);
    expect(answers.find((answer) => answer.status === 422)!.body).toMatchObject({
      code: "host.quota_exceeded",
      quota: "sites",
    });
  });

  it("409 host.under_review while the project is taken down", async () => {
    const { as, id } = await owned();
    await (
      await asPerson(t, "usr_sstaff1")
    )("POST", `/projects/${id}/takedown`, { reason: "review" });
    expect((await as("POST", `/projects/${id}/sites`, { slug: fresh("u") })).body).toMatchObject({
      status: 409,
      code: "host.under_review",
    });
  });

  it("deployers and viewers create none (403 auth.role_required)", async () => {
    const { as, id } = await owned();
    await addMember(as, id, "usr_sdep1", "deployer");
    const answer = await (await asPerson(t, "usr_sdep1"))("POST", `/projects/${id}/sites`, { slug: fresh("d") });
    expect(answer.body).toMatchObject({ status: 403, code: "auth.role_required" });
  });
});

describe("reading and listing sites", () => {
  it("any member lists a project's sites newest first, paged; and reads one", async () => {
    const { as, id } = await owned();
    const sites = [];
    for (let i = 0; i < 3; i++) sites.push((await siteOf(as, id)).id);
    await addMember(as, id, "usr_sview1", "viewer");
    const viewer = await asPerson(t, "usr_sview1");
    const first = await viewer("GET", `/projects/${id}/sites?limit=2`);
    expect(first.body.sites.map((s: { id: string }) => s.id)).toEqual([sites[2], sites[1]]);
    const second = await viewer("GET", `/projects/${id}/sites?limit=2&before=${first.body.next_before}`);
    expect(second.body.sites.map((s: { id: string }) => s.id)).toEqual([sites[0]]);
    expect((await viewer("GET", `/sites/${sites[0]}`)).body.site).toMatchObject({ id: sites[0], project_id: id });
  });

  it("a site of a project the caller holds no role in, or none at all: 404 host.site.not_found alike", async () => {
    const { as, id } = await owned();
    const site = await siteOf(as, id);
    const stranger = await asPerson(t, `usr_${fresh("x")}`);
    expect((await stranger("GET", `/sites/${site.id}`)).body).toMatchObject({
      status: 404,
      code: "host.site.not_found",
    });
    expect((await stranger("GET", "/sites/sit_00000000000000000000000000")).body.code).toBe("host.site.not_found");
  });
});

describe("deleting a site", () => {
  it("deletes its deploys (kept as deleted, files freed) and domains in one go; host.site.deleted", async () => {
    const { owner, as, id } = await owned();
    const site = await siteOf(as, id);
    const deploy = `dep_${fresh("d")}`;
    await hostSql(
      t,
      `insert into {deploys} (id, site_id, project_id, state, bytes, created_by, created_at)
        values (?, ?, ?, 'ready', 5, ?, now())`,
      [deploy, site.id, id, owner],
    );
    await hostSql(
      t,
      `insert into {deploy_files} (deploy_id, path, digest, size, content_type) values (?, 'index.html', 'ab', 5, 'text/html')`,
      [deploy],
    );
    const hostname = `${fresh("w")}.example.com`;
    await hostSql(
      t,
      `insert into {domains} (id, site_id, project_id, hostname, token, status, created_at)
        values (?, ?, ?, ?, 'tok', 'verified', now())`,
      [`dom_${fresh("d")}`, site.id, id, hostname],
    );
    const answer = await as("DELETE", `/sites/${site.id}`);
    expect(answer.body).toMatchObject({ changed: true, site: { id: site.id } });
    expect((await as("GET", `/sites/${site.id}`)).body.code).toBe("host.site.not_found");
    expect(await hostSql(t, `select state from {deploys} where id = ?`, [deploy])).toEqual([{ state: "deleted" }]);
    expect(await hostSql(t, `select 1 from {deploy_files} where deploy_id = ?`, [deploy])).toEqual([]);
    expect(await hostSql(t, `select 1 from {domains} where site_id = ?`, [site.id])).toEqual([]);
    // Its slug is free again.
    expect((await as("POST", `/projects/${id}/sites`, { slug: site.slug })).status).toBe(201);
    const events = (await hostEvents(t, site.id)).map((event) => [event.subject, event.hostname ?? ""]);
    expect(events).toEqual([
      ["host.site.created", ""],
      ["host.domain.removed", hostname],
      ["host.site.deleted", ""],
    ]);
  });

  it("409 host.under_review while the site or its project is taken down", async () => {
    const { as, id } = await owned();
    const staff = await asPerson(t, "usr_sstaff1");
    const site = await siteOf(as, id);
    await staff("POST", `/sites/${site.id}/takedown`, { reason: "review" });
    expect((await as("DELETE", `/sites/${site.id}`)).body).toMatchObject({ status: 409, code: "host.under_review" });
    await staff("DELETE", `/sites/${site.id}/takedown`);
    await staff("POST", `/projects/${id}/takedown`, { reason: "review" });
    expect((await as("DELETE", `/sites/${site.id}`)).body.code).toBe("host.under_review");
    await staff("DELETE", `/projects/${id}/takedown`);
    expect((await as("DELETE", `/sites/${site.id}`)).status).toBe(200);
  });

  it("deployers delete no site (403 auth.role_required)", async () => {
    const { as, id } = await owned();
    const site = await siteOf(as, id);
    await addMember(as, id, "usr_sdep2", "deployer");
    expect((await (await asPerson(t, "usr_sdep2"))("DELETE", `/sites/${site.id}`)).body.code).toBe(
      "auth.role_required",
    );
  });
});
