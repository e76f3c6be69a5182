import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { outboxEvents } from "../support/outbox.js";
import { usePlatform } from "../support/platform.js";
import { describeRoundTrip } from "./round-trip.js";
import { appClaims, blobFiles, getBytes, postUpload, rowCount, sha256, upload } from "./support.js";

const t = usePlatform({ services: ["media"], env: { PF_MEDIA_MAX_BYTES: String(1024 * 1024) } });

describe("media files on the directory store", () => {
  describeRoundTrip(t, () => blobFiles(t));

  it("keeps each object as one file under the data dir, and no temporary file", async () => {
    const { body: file } = await upload(t, await t.token(appClaims()), randomBytes(1000));
    const files = await blobFiles(t);
    expect(files.filter((path) => path.endsWith(`/blobs/media/${file.key}`))).toHaveLength(1);
    expect(files.filter((path) => path.includes("/.tmp/"))).toEqual([]);
  });

  it("refuses a file over the cap while it arrives (413 media.too_large), storing nothing", async () => {
    const before = [await rowCount(t), await blobFiles(t)];
    const answer = await upload(t, await t.token(appClaims()), randomBytes(1024 * 1024 + 1));
    expect(answer.status).toBe(413);
    expect(answer.body).toMatchObject({ code: "media.too_large", limit: 1024 * 1024 });
    expect([await rowCount(t), await blobFiles(t)]).toEqual(before);
  });

  it("takes a raw application/octet-stream body named by the query", async () => {
    const bytes = randomBytes(5000);
    const answer = await postUpload(t, "app1", bytes, {
      token: await t.token(appClaims()),
      type: "application/octet-stream",
      query: "?name=raw.bin",
    });
    expect(answer.status).toBe(201);
    expect(answer.body).toMatchObject({
      name: "raw.bin",
      content_type: "application/octet-stream",
      sha256: sha256(bytes),
    });
    expect(sha256((await getBytes(t, `/media/f/${answer.body.key}`)).bytes)).toBe(sha256(bytes));
  });

  it("lets a service write any namespace, recorded as the uploader", async () => {
    const token = await t.token({ kind: "service", svc: "blog", caps: ["media.object.upload"] });
    const answer = await upload(t, token, Buffer.from("x"), "x.txt", "text/plain", "someapp");
    expect(answer.status).toBe(201);
    expect(answer.body).toMatchObject({ app: "someapp", uploader: "svc:blog" });
  });

  it("publishes media.object.created with the object, in the upload's transaction", async () => {
    const { body: file } = await upload(t, await t.token(appClaims()), Buffer.from("event"));
    const events = await outboxEvents(t, "media", file.key);
    expect(events.map((event) => event.subject)).toEqual(["media.object.created"]);
    expect(JSON.parse(events[0].payload)).toMatchObject({ file: { key: file.key, sha256: file.sha256 } });
  });
});
