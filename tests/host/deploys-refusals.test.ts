import { buffer } from "node:stream/consumers";
import { createGzip, gzipSync } from "node:zlib";
import { pack } from "tar-stream";
import { beforeAll, describe, expect, it } from "vitest";
import { sweepUploads } from "../../services/host/workers/sweep.js";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { outboxEvents } from "../support/outbox.js";
import { usePlatform } from "../support/platform.js";
import {
  blobObjects,
  deployStates,
  hostRows,
  SITE,
  siteOfOwnProject,
  tarOf,
  uploadArchive,
  uploadFiles,
  type Entry,
} from "./deploys-support.js";
import { HOST_ENV, hostContext } from "./support.js";

// Nothing is older than the grace until the test moves the clock: no pass of the sweep touches an upload under way.
const clock = new ManualClock(new Date());
const t = usePlatform({ services: ["host"], clock, env: { ...HOST_ENV, PF_HOST_BLOB_GRACE_MS: "0" } });

const KiB = 1024;
let site: Awaited<ReturnType<typeof siteOfOwnProject>>;
let before: string[];
beforeAll(async () => {
  site = await siteOfOwnProject(t);
  await hostRows(
    t,
    `update {projects} set quota_file_bytes = ?, quota_deploy_files = ?, quota_deploy_bytes = ? where id = ?`,
    [64 * KiB, 50, 256 * KiB, site.projectId],
  );
  const good = await uploadArchive(t, site.token, site.siteId, await tarOf(SITE));
  expect(good.status).toBe(201);
  before = await blobObjects(t);
});

let n = 0;
/** A file accepted before the fault, with bytes of its own: its blob is stored, and must be swept. */
const storedFirst = (): Entry => ({ name: `first-${++n}.txt`, body: `accepted before the fault ${n} ${Date.now()}` });

/** A gzip bomb: a tar whose one file is `bytes` of zeros, packed and gzipped as a stream (a few KiB on the wire). */
async function bomb(bytes: number): Promise<Buffer> {
  const archive = pack();
  const gzipped = buffer(archive.pipe(createGzip()));
  const entry = archive.entry({ name: "zeros.txt", size: bytes });
  const block = Buffer.alloc(64 * KiB);
  for (let sent = 0; sent < bytes; sent += block.length)
    if (!entry.write(block)) await new Promise((resolve) => entry.once("drain", resolve));
  entry.end();
  archive.finalize();
  return gzipped;
}

describe("a refused upload", () => {
  const cases: [string, () => Promise<Buffer>, number, string, string][] = [
    [
      "a path out of the site",
      () => tarOf([storedFirst(), { name: "../../etc/passwd", body: "x" }]),
      422,
      "traversal",
      "../../etc/passwd",
    ],
    [
      "a PAX header renaming an entry to an absolute path",
      () => tarOf([storedFirst(), { name: "innocent.txt", pax: { path: "/etc/passwd" }, body: "x" }]),
      422,
      "traversal",
      "/etc/passwd",
    ],
    [
      "a symlink to /",
      () => tarOf([storedFirst(), { name: "root", type: "symlink", linkname: "/" }]),
      422,
      "link",
      "root",
    ],
    [
      "a hardlink",
      () => tarOf([storedFirst(), { name: "p.txt", type: "link", linkname: "/etc/passwd" }]),
      422,
      "link",
      "p.txt",
    ],
    ["a FIFO", () => tarOf([storedFirst(), { name: "pipe", type: "fifo" }]), 422, "special", "pipe"],
    [
      "a character device",
      () => tarOf([storedFirst(), { name: "null", type: "character-device", devmajor: 1, devminor: 3 }]),
      422,
      "special",
      "null",
    ],
    [
      "server-side code",
      () => tarOf([storedFirst(), { name: "index.php", body: "<?php" }]),
      422,
      "server_code",
      "index.php",
    ],
    ["a hidden file", () => tarOf([storedFirst(), { name: ".env", body: "SECRET=1" }]), 422, "hidden", ".env"],
    [
      "a hidden folder",
      () => tarOf([storedFirst(), { name: ".git/config", body: "[core]" }]),
      422,
      "hidden",
      ".git/config",
    ],
    [
      "names equal but for case",
      () =>
        tarOf([
          { name: "a.txt", body: `a ${Date.now()}` },
          { name: "A.txt", body: "A" },
        ]),
      422,
      "duplicate",
      "A.txt",
    ],
    [
      "names equal once NFC",
      () =>
        tarOf([
          { name: "caf\u00e9.txt", body: `nfc ${Date.now()}` },
          { name: "cafe\u0301.txt", body: "nfd" },
        ]),
      422,
      "duplicate",
      "cafe\u0301.txt",
    ],
    [
      "a file over the file cap",
      () => tarOf([storedFirst(), { name: "big.txt", body: Buffer.alloc(64 * KiB + 1, 97) }]),
      413,
      "quota",
      "big.txt",
    ],
    [
      "more files than a deploy may hold",
      () => tarOf([storedFirst(), ...Array.from({ length: 60 }, (_, i) => ({ name: `f${i}.txt`, body: "" }))]),
      413,
      "quota",
      "f49.txt",
    ],
    ["a gzip bomb past the deploy's bytes", () => bomb(16 * 1024 * 1024), 413, "quota", "zeros.txt"],
  ];

  it.each(cases)(
    "%s: answered naming the entry and rule, the deploy failed with its log",
    async (_what, archive, status, rule, path) => {
      const answer = await uploadArchive(t, site.token, site.siteId, await archive());
      expect(answer.status, JSON.stringify(answer.body)).toBe(status);
      expect(answer.body).toMatchObject({
        code: status === 413 ? "host.quota_exceeded" : "host.deploy.invalid",
        rule,
        path,
        deploy_id: expect.stringMatching(/^dep_/),
      });
      const read = await t.http("GET", `/host/api/v1/deploys/${answer.body.deploy_id}`, { token: site.token });
      expect(read.body.deploy).toMatchObject({ state: "DEPLOY_STATE_FAILED", error: answer.body.detail });
      const log = await t.http("GET", `/host/api/v1/deploys/${answer.body.deploy_id}/log`, { token: site.token });
      expect(log.body.log.at(-1)).toMatchObject({ level: "error", rule, path });
      const events = await outboxEvents(t, "host", answer.body.deploy_id);
      expect(events.map((event) => event.subject)).toEqual(["host.deploy.failed"]);
    },
  );

  it.each([
    [
      "a truncated archive",
      async () => (await tarOf([storedFirst(), { name: "cut.txt", body: "y".repeat(4000) }], false)).subarray(0, 2048),
    ],
    ["a body that is no tar at all", async () => gzipSync(Buffer.from("just some text, not an archive"))],
  ])("%s: 422 rule archive", async (_what, archive) => {
    const answer = await uploadArchive(t, site.token, site.siteId, await archive());
    expect(answer.status, JSON.stringify(answer.body)).toBe(422);
    expect(answer.body).toMatchObject({ code: "host.deploy.invalid", rule: "archive" });
  });

  it("a multipart part named ../x: 422 traversal", async () => {
    const answer = await uploadFiles(t, site.token, site.siteId, [
      { name: "ok.txt", body: `multipart ${Date.now()}` },
      { name: "../x", body: "x" },
    ]);
    expect(answer.status, JSON.stringify(answer.body)).toBe(422);
    expect(answer.body).toMatchObject({ code: "host.deploy.invalid", rule: "traversal", path: "../x" });
  });

  it("leaves nothing ready and, after the sweep's pass, the blob store as it was", async () => {
    expect(await deployStates(t, site.projectId)).toEqual({ ready: 1, failed: expect.any(Number) });
    expect((await blobObjects(t)).length).toBeGreaterThan(before.length);
    clock.advance(1);
    await sweepUploads(hostContext(t));
    expect(await blobObjects(t)).toEqual(before);
    const rows = await hostRows<{ digest: string }>(t, `select digest from {blobs} order by digest`);
    expect(rows.map((row) => row.digest)).toEqual(before);
  });
});
