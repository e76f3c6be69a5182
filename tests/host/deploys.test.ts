import { create } from "@bufbuild/protobuf";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { beforeAll, describe, expect, it } from "vitest";
import { DeployState, DeployUploadSchema } from "../../gen/pf/host/v1/deploys_pb.js";
import { HostService } from "../../gen/pf/host/v1/host_pb.js";
import { outboxEvents } from "../support/outbox.js";
import { usePlatform } from "../support/platform.js";
import {
  blobBytes,
  blobObjects,
  deployStates,
  hostRows,
  sha256,
  SITE,
  siteOfOwnProject,
  tarOf,
  uploadArchive,
  uploadFiles,
} from "./deploys-support.js";
import { addMember, appToken, fresh, HOST_ENV, hostCall } from "./support.js";

const KiB = 1024;
/** A file of `size` bytes of one letter. */
const fileOf = (letter: string, size: number) => ({ name: `${letter}.txt`, body: letter.repeat(size) });

const t = usePlatform({ services: ["host"], env: HOST_ENV });

let owner: { token: string; projectId: string; siteId: string };
const as = (method: string, path: string) => t.http(method, `/host/api/v1${path}`, { token: owner.token });
beforeAll(async () => {
  owner = await siteOfOwnProject(t);
});

/** The site's deploy pointer as stored. */
async function pointer(siteId: string): Promise<string | null> {
  const [site] = await hostRows<{ active: string | null }>(
    t,
    `select active_deploy_id as active from {sites} where id = ?`,
    [siteId],
  );
  return site.active;
}

describe("upload (POST /sites/{id}/deploys)", () => {
  it("takes a site as tar.gz: 201 with the ready deploy, each file a blob under its digest, its manifest, log and event", async () => {
    const answer = await uploadArchive(t, owner.token, owner.siteId, await tarOf(SITE));
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    const { deploy } = answer.body;
    const bytes = SITE.reduce((sum, file) => sum + Buffer.byteLength(file.body), 0);
    expect(deploy).toMatchObject({
      site_id: owner.siteId,
      project_id: owner.projectId,
      state: "DEPLOY_STATE_READY",
      files: SITE.length,
      bytes: String(bytes),
      created_by: expect.stringMatching(/^usr_deployer/),
    });
    expect(deploy.id).toMatch(/^dep_[0-9a-z]{26}$/);
    expect(deploy.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(deploy.validated_at).toBeDefined();
    expect(deploy.active ?? false).toBe(false);

    const files = await hostRows<{ path: string; digest: string; size: string; contentType: string; encodings: any }>(
      t,
      `select path, digest, size, content_type as "contentType", encodings from {deploy_files} where deploy_id = ? order by path`,
      [deploy.id],
    );
    expect(files.map((file) => file.path)).toEqual(SITE.map((file) => file.name).sort());
    const objects = await blobObjects(t);
    for (const file of SITE) {
      const row = files.find((each) => each.path === file.name)!;
      expect(row.digest).toBe(sha256(Buffer.from(file.body)));
      expect(Number(row.size)).toBe(Buffer.byteLength(file.body));
      expect(objects).toContain(row.digest);
      expect((await blobBytes(t, row.digest)).equals(Buffer.from(file.body))).toBe(true);
    }
    expect(files.find((file) => file.path === "index.html")!.contentType).toMatch(/^text\/html/);
    expect(files.find((file) => file.path === "img/dot.png")!.contentType).toBe("image/png");

    // Compressible files have br and gzip copies that are smaller, each a blob of its own; a PNG has none.
    const index = files.find((file) => file.path === "index.html")!;
    const html = Buffer.from(SITE[0].body);
    expect(Object.keys(index.encodings).sort()).toEqual(["br", "gzip"]);
    expect(brotliDecompressSync(await blobBytes(t, index.encodings.br.digest)).equals(html)).toBe(true);
    expect(gunzipSync(await blobBytes(t, index.encodings.gzip.digest)).equals(html)).toBe(true);
    expect(index.encodings.br.size).toBeLessThan(html.length);
    expect(files.find((file) => file.path === "img/dot.png")!.encodings).toEqual({});

    const log = await as("GET", `/deploys/${deploy.id}/log`);
    expect(log.status).toBe(200);
    expect(log.body.log).toHaveLength(SITE.length);
    expect(log.body.log[0]).toMatchObject({ seq: 1, level: "info", path: SITE[0].name });

    const events = await outboxEvents(t, "host", deploy.id);
    expect(events.map((event) => event.subject)).toEqual(["host.deploy.ready"]);
  });

  it("takes a plain tar, and an equal site has an equal manifest digest", async () => {
    const gz = await uploadArchive(t, owner.token, owner.siteId, await tarOf(SITE));
    const tar = await uploadArchive(t, owner.token, owner.siteId, await tarOf(SITE, false), "application/x-tar");
    expect(tar.status, JSON.stringify(tar.body)).toBe(201);
    expect(tar.body.deploy.digest).toBe(gz.body.deploy.digest);
    expect(tar.body.deploy.id).not.toBe(gz.body.deploy.id);
  });

  it("takes loose files as multipart parts, each named by its path", async () => {
    const answer = await uploadFiles(t, owner.token, owner.siteId, [
      { name: "index.html", body: "<!doctype html><p>multipart</p>", type: "text/html" },
      { name: "docs/guide/index.html", body: "<!doctype html><p>guide</p>", type: "text/html" },
      { name: "empty.txt", body: "" },
    ]);
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    expect(answer.body.deploy).toMatchObject({ state: "DEPLOY_STATE_READY", files: 3 });
    const files = await hostRows<{ path: string; digest: string }>(
      t,
      `select path, digest from {deploy_files} where deploy_id = ? order by path`,
      [answer.body.deploy.id],
    );
    expect(files).toEqual([
      { path: "docs/guide/index.html", digest: sha256("<!doctype html><p>guide</p>") },
      { path: "empty.txt", digest: sha256("") },
      { path: "index.html", digest: sha256("<!doctype html><p>multipart</p>") },
    ]);
  });

  it("takes the same over RPC: an archive in chunks, or files each started by a message naming it", async () => {
    const client = t.client(HostService, owner.token);
    const tar = await tarOf(SITE);
    const archive = await client.uploadDeploy(
      (async function* () {
        yield create(DeployUploadSchema, { id: owner.siteId, contentType: "application/gzip" });
        for (let at = 0; at < tar.length; at += 100)
          yield create(DeployUploadSchema, { chunk: tar.subarray(at, at + 100) });
      })(),
    );
    expect(archive.deploy).toMatchObject({ state: DeployState.READY, files: SITE.length });

    const files = await client.uploadDeploy(
      (async function* () {
        yield create(DeployUploadSchema, { id: owner.siteId, name: "index.html", chunk: Buffer.from("<p>") });
        yield create(DeployUploadSchema, { chunk: Buffer.from("rpc</p>") });
        yield create(DeployUploadSchema, { name: "empty.txt" });
        yield create(DeployUploadSchema, { name: "a/b.txt", chunk: Buffer.from("b") });
      })(),
    );
    expect(files.deploy).toMatchObject({ state: DeployState.READY, files: 3 });
    const rows = await hostRows<{ path: string; digest: string }>(
      t,
      `select path, digest from {deploy_files} where deploy_id = ? order by path`,
      [files.deploy!.id],
    );
    expect(rows).toEqual([
      { path: "a/b.txt", digest: sha256("b") },
      { path: "empty.txt", digest: sha256("") },
      { path: "index.html", digest: sha256("<p>rpc</p>") },
    ]);
  });

  it("refuses past the project's storage (413 host.quota_exceeded, rule quota), counting what its ready deploys keep", async () => {
    const small = await siteOfOwnProject(t);
    await hostRows(t, `update {projects} set quota_storage_bytes = ? where id = ?`, [48 * KiB, small.projectId]);
    const first = await uploadArchive(t, small.token, small.siteId, await tarOf([fileOf("a", 30 * KiB)]));
    expect(first.status).toBe(201);
    const second = await uploadArchive(t, small.token, small.siteId, await tarOf([fileOf("b", 30 * KiB)]));
    expect(second.status, JSON.stringify(second.body)).toBe(413);
    expect(second.body).toMatchObject({ code: "host.quota_exceeded", rule: "quota", deploy_id: expect.any(String) });
    expect(await deployStates(t, small.projectId)).toEqual({ ready: 1, failed: 1 });
  });

  it("rechecks storage as an upload ends: of two side by side that fit alone but not together, one is ready", async () => {
    const small = await siteOfOwnProject(t);
    await hostRows(t, `update {projects} set quota_storage_bytes = ? where id = ?`, [48 * KiB, small.projectId]);
    const answers = await Promise.all(
      ["c", "d"].map(async (tag) => uploadArchive(t, small.token, small.siteId, await tarOf([fileOf(tag, 30 * KiB)]))),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 413]);
    expect(await deployStates(t, small.projectId)).toEqual({ ready: 1, failed: 1 });
  });

  it("refuses an upload while the site or its project is taken down (409 host.under_review), opening no deploy", async () => {
    const other = await siteOfOwnProject(t);
    await hostRows(t, `update {sites} set taken_down_at = now(), taken_down_by = 'usr_staff' where id = ?`, [
      other.siteId,
    ]);
    const answer = await uploadArchive(t, other.token, other.siteId, await tarOf(SITE));
    expect(answer.status).toBe(409);
    expect(answer.body.code).toBe("host.under_review");
    expect(await hostRows(t, `select id from {deploys} where site_id = ?`, [other.siteId])).toEqual([]);
  });
});

describe("reads", () => {
  it("lists a site's deploys newest first, cursor-paged, with the active one marked", async () => {
    const site = await siteOfOwnProject(t);
    const ids: string[] = [];
    for (let n = 0; n < 3; n++) {
      const answer = await uploadArchive(
        t,
        site.token,
        site.siteId,
        await tarOf([{ name: "index.html", body: `v${n}` }]),
      );
      ids.push(answer.body.deploy.id);
    }
    await t.http("POST", `/host/api/v1/deploys/${ids[1]}/activate`, { token: site.token, body: {} });
    const first = await t.http("GET", `/host/api/v1/sites/${site.siteId}/deploys?limit=2`, { token: site.token });
    expect(first.status).toBe(200);
    expect(first.body.deploys.map((deploy: any) => deploy.id)).toEqual([ids[2], ids[1]]);
    expect(first.body.deploys.map((deploy: any) => deploy.active ?? false)).toEqual([false, true]);
    const second = await t.http(
      "GET",
      `/host/api/v1/sites/${site.siteId}/deploys?limit=2&before=${first.body.next_before}`,
      {
        token: site.token,
      },
    );
    expect(second.body.deploys.map((deploy: any) => deploy.id)).toEqual([ids[0]]);
    expect(second.body.next_before ?? "").toBe("");
  });

  it("reads a deploy with whether it is active", async () => {
    const site = await siteOfOwnProject(t);
    const { body } = await uploadArchive(t, site.token, site.siteId, await tarOf([{ name: "index.html", body: "x" }]));
    await t.http("POST", `/host/api/v1/deploys/${body.deploy.id}/activate`, { token: site.token, body: {} });
    const read = await t.http("GET", `/host/api/v1/deploys/${body.deploy.id}`, { token: site.token });
    expect(read.status).toBe(200);
    expect(read.body.deploy).toMatchObject({ id: body.deploy.id, active: true, state: "DEPLOY_STATE_READY" });
  });
});

describe("activate (POST /deploys/{id}/activate)", () => {
  it("switches the site's pointer, says when it did not move, and rolls back to an earlier ready deploy", async () => {
    const site = await siteOfOwnProject(t);
    const v1 = (await uploadArchive(t, site.token, site.siteId, await tarOf([{ name: "index.html", body: "v1" }]))).body
      .deploy.id;
    const v2 = (await uploadArchive(t, site.token, site.siteId, await tarOf([{ name: "index.html", body: "v2" }]))).body
      .deploy.id;
    const activate = (id: string) =>
      t.http("POST", `/host/api/v1/deploys/${id}/activate`, { token: site.token, body: {} });

    const first = await activate(v2);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ changed: true, deploy: { id: v2, active: true } });
    expect(await pointer(site.siteId)).toBe(v2);
    const again = await activate(v2);
    expect(again.body.changed ?? false).toBe(false);
    const back = await activate(v1);
    expect(back.body).toMatchObject({ changed: true, deploy: { id: v1, active: true } });
    expect(await pointer(site.siteId)).toBe(v1);
    const events = await outboxEvents(t, "host", site.siteId);
    expect(events.filter((event) => event.subject === "host.deploy.activated")).toHaveLength(2);
  });

  it("refuses a deploy that is not ready (409 host.deploy_not_ready)", async () => {
    const site = await siteOfOwnProject(t);
    const refused = await uploadArchive(
      t,
      site.token,
      site.siteId,
      await tarOf([{ name: "index.php", body: "<?php" }]),
    );
    expect(refused.status).toBe(422);
    const answer = await t.http("POST", `/host/api/v1/deploys/${refused.body.deploy_id}/activate`, {
      token: site.token,
      body: {},
    });
    expect(answer.status).toBe(409);
    expect(answer.body.code).toBe("host.deploy_not_ready");
    expect(await pointer(site.siteId)).toBeNull();
  });

  it("serialises concurrent activations: one consistent pointer at the end", async () => {
    const site = await siteOfOwnProject(t);
    const ids: string[] = [];
    for (const body of ["a", "b"])
      ids.push(
        (await uploadArchive(t, site.token, site.siteId, await tarOf([{ name: "index.html", body }]))).body.deploy.id,
      );
    const answers = await Promise.all(
      ids.map((id) => t.http("POST", `/host/api/v1/deploys/${id}/activate`, { token: site.token, body: {} })),
    );
    expect(answers.map((answer) => [answer.status, answer.body.changed])).toEqual([
      [200, true],
      [200, true],
    ]);
    const active = await pointer(site.siteId);
    expect(ids).toContain(active);
    const reads = await Promise.all(
      ids.map((id) => t.http("GET", `/host/api/v1/deploys/${id}`, { token: site.token })),
    );
    expect(reads.map((read) => read.body.deploy.active ?? false)).toEqual(ids.map((id) => id === active));
  });
});

describe("delete (DELETE /deploys/{id})", () => {
  it("deletes an inactive deploy: state deleted, its file rows gone, an event; a second delete changes nothing", async () => {
    const site = await siteOfOwnProject(t);
    const old = (await uploadArchive(t, site.token, site.siteId, await tarOf(SITE))).body.deploy.id;
    const answer = await t.http("DELETE", `/host/api/v1/deploys/${old}`, { token: site.token });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ changed: true, deploy: { id: old, state: "DEPLOY_STATE_DELETED" } });
    expect(await hostRows(t, `select path from {deploy_files} where deploy_id = ?`, [old])).toEqual([]);
    expect((await outboxEvents(t, "host", old)).map((event) => event.subject)).toContain("host.deploy.deleted");
    const again = await t.http("DELETE", `/host/api/v1/deploys/${old}`, { token: site.token });
    expect(again.status).toBe(200);
    expect(again.body.changed ?? false).toBe(false);
    const list = await t.http("GET", `/host/api/v1/sites/${site.siteId}/deploys`, { token: site.token });
    expect(list.body.deploys ?? []).toEqual([]);
  });

  it("refuses the active deploy (409 host.deploy_active), and any under takedown (409 host.under_review)", async () => {
    const site = await siteOfOwnProject(t);
    const active = (await uploadArchive(t, site.token, site.siteId, await tarOf([{ name: "a.txt", body: "a" }]))).body
      .deploy.id;
    const other = (await uploadArchive(t, site.token, site.siteId, await tarOf([{ name: "b.txt", body: "b" }]))).body
      .deploy.id;
    await t.http("POST", `/host/api/v1/deploys/${active}/activate`, { token: site.token, body: {} });
    const refused = await t.http("DELETE", `/host/api/v1/deploys/${active}`, { token: site.token });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe("host.deploy_active");

    await hostRows(t, `update {projects} set taken_down_at = now(), taken_down_by = 'usr_staff' where id = ?`, [
      site.projectId,
    ]);
    const review = await t.http("DELETE", `/host/api/v1/deploys/${other}`, { token: site.token });
    expect(review.status).toBe(409);
    expect(review.body.code).toBe("host.under_review");
    const [row] = await hostRows<{ state: string }>(t, `select state from {deploys} where id = ?`, [other]);
    expect(row.state).toBe("ready");
  });
});

describe("a CI deploy token (a first-party app the project added as deployer)", () => {
  it("uploads and activates as itself (app:<id>); as viewer, or in no project, it cannot upload", async () => {
    const owning = hostCall(t, owner.token);
    const [ci, watcher, stranger] = [fresh("ci"), fresh("view"), fresh("none")];
    await addMember(owning, owner.projectId, `app:${ci}`, "deployer");
    await addMember(owning, owner.projectId, `app:${watcher}`, "viewer");
    const tar = await tarOf(SITE);

    const uploaded = await uploadArchive(t, await appToken(t, ci), owner.siteId, tar);
    expect(uploaded.status, JSON.stringify(uploaded.body)).toBe(201);
    expect(uploaded.body.deploy).toMatchObject({ state: "DEPLOY_STATE_READY", created_by: `app:${ci}` });
    const activated = await hostCall(t, await appToken(t, ci))(
      "POST",
      `/deploys/${uploaded.body.deploy.id}/activate`,
      {},
    );
    expect(activated.body).toMatchObject({ deploy: { active: true }, changed: true });
    expect(await pointer(owner.siteId)).toBe(uploaded.body.deploy.id);

    const asViewer = await uploadArchive(t, await appToken(t, watcher), owner.siteId, tar);
    expect(asViewer.body).toMatchObject({ status: 403, code: "auth.role_required" });
    const asStranger = await uploadArchive(t, await appToken(t, stranger), owner.siteId, tar);
    expect(asStranger.body).toMatchObject({ status: 404, code: "host.site.not_found" });
  });
});
