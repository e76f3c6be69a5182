import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { usePlatform, type TestPlatform } from "../support/platform.js";
import {
  appClaims,
  blobFiles,
  multipart,
  openUploads,
  postUpload,
  rowCount,
  upload,
  namespaceUsage,
} from "./support.js";

const KIB = 1024;
const QUOTA = 1024 * KIB;
const t = usePlatform({
  services: ["media"],
  env: { PF_MEDIA_QUOTA_BYTES: String(QUOTA), PF_MEDIA_QUOTA_FILES: "3" },
});

/** What a namespace holds against its quotas, what its files add up to, and its uploads under way. */
async function usageOf(t: TestPlatform, app: string) {
  const media = t.platform.contexts.get("media")!;
  const [files] = await media.orm.em
    .getConnection()
    .execute(`select coalesce(sum(size), 0) as bytes, count(*) as files from media.files where app = ?`, [app]);
  return {
    usage: await namespaceUsage(media, app),
    stored: { bytes: Number(files.bytes), files: Number(files.files) },
    open: (await openUploads(media, app)).length,
  };
}

const uploadInto = async (app: string, bytes: number) =>
  upload(t, await t.token(appClaims(app)), randomBytes(bytes), "a.bin", "application/octet-stream", app);

describe("per-app quotas", () => {
  it("refuse an upload that would pass its namespace's bytes (413 media.quota_exceeded), keeping nothing", async () => {
    expect((await uploadInto("q1", 600 * KIB)).status).toBe(201);
    const [rows, blobs] = [await rowCount(t), await blobFiles(t)];
    const over = await uploadInto("q1", 600 * KIB);
    expect(over.status).toBe(413);
    expect(over.body).toMatchObject({ code: "media.quota_exceeded", quota: "bytes", limit: QUOTA });
    expect([await rowCount(t), await blobFiles(t)]).toEqual([rows, blobs]);
    // What is left still takes a file that fits, and another namespace has its own quota.
    expect((await uploadInto("q1", 400 * KIB)).status).toBe(201);
    expect((await uploadInto("q2", 600 * KIB)).status).toBe(201);
    const q1 = await usageOf(t, "q1");
    expect(q1.usage).toEqual({ bytes: 1000 * KIB, files: 2 });
    expect(q1.usage).toEqual(q1.stored);
  });

  it("never let concurrent uploads of one namespace pass it together", async () => {
    const answers = await Promise.all(Array.from({ length: 4 }, () => uploadInto("q3", 400 * KIB)));
    const statuses = answers.map((answer) => answer.status).sort();
    // Each reserves as its bytes arrive, so interleaved uploads near the quota may all be refused (each giving back
    // what it held); what must never happen is more passing than the quota holds.
    expect(statuses.filter((status) => status === 201).length).toBeLessThanOrEqual(2);
    expect(statuses.filter((status) => status !== 201).every((status) => status === 413)).toBe(true);
    const q3 = await usageOf(t, "q3");
    expect(q3.usage).toEqual(q3.stored);
    expect(q3.usage.bytes).toBeLessThanOrEqual(QUOTA);
    expect(q3.open).toBe(0);
  });

  it("refuse a file past its namespace's quota of files, open uploads counted", async () => {
    for (let i = 0; i < 3; i++) expect((await uploadInto("q4", 10)).status).toBe(201);
    const over = await uploadInto("q4", 10);
    expect(over.status).toBe(413);
    expect(over.body).toMatchObject({ code: "media.quota_exceeded", quota: "files", limit: 3 });
  });

  it("give back what a failed upload reserved", async () => {
    const token = await t.token(appClaims("q5"));
    const file = { name: "file", filename: "a.bin", type: "x/y", data: randomBytes(900 * KIB) };
    const truncated = await postUpload(t, "q5", multipart([file], { close: false }), { token });
    expect(truncated.status).toBe(400);
    expect((await usageOf(t, "q5")).usage).toEqual({ bytes: 0, files: 0 });
    expect((await uploadInto("q5", 900 * KIB)).status).toBe(201);
  });
});
