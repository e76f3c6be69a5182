import { randomBytes } from "node:crypto";
import { expect, it } from "vitest";
import type { TestPlatform } from "../support/platform.js";
import { appClaims, getBytes, multipart, postUpload, rowCount, sha256, upload } from "./support.js";

/**
 * Upload, read and serve through the gateway, and the bad uploads that must
 * leave nothing stored, against whichever blob store the platform runs.
 * `stored` lists what the store holds (objects, temporary files).
 */
export function describeRoundTrip(t: TestPlatform, stored: () => Promise<string[]>) {
  it("uploads a file and serves the same bytes at /f/{key}: digest, size, type, name and uploader recorded", async () => {
    const token = await t.token(appClaims());
    const bytes = randomBytes(200_000);
    const answer = await upload(t, token, bytes, "café photo.png", "image/png");
    expect(answer.status).toBe(201);
    const file = answer.body;
    expect(file).toMatchObject({
      app: "app1",
      name: "café photo.png",
      content_type: "image/png",
      size: String(bytes.length),
      sha256: sha256(bytes),
      uploader: "app:app1",
    });
    expect(file.key).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect(file.key).not.toContain(file.sha256.slice(0, 16));
    expect(Date.parse(file.created_at)).not.toBeNaN();

    const served = await getBytes(t, `/media/f/${file.key}`);
    expect(served.status).toBe(200);
    expect(sha256(served.bytes)).toBe(sha256(bytes));
    expect(served.headers.get("content-type")).toBe("image/png");
    expect(served.headers.get("content-length")).toBe(String(bytes.length));
    expect(served.headers.get("etag")).toBe(`"${sha256(bytes)}"`);
    expect(served.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(served.headers.get("x-content-type-options")).toBe("nosniff");
    expect(served.headers.get("accept-ranges")).toBe("bytes");
    expect(served.headers.get("content-disposition")).toBe(
      `inline; filename="caf_ photo.png"; filename*=UTF-8''caf%C3%A9%20photo.png`,
    );
    expect(served.headers.get("content-security-policy")).toContain("sandbox");

    // Range: a middle slice, an open end, a suffix; then one past the end (416).
    const middle = await getBytes(t, `/media/f/${file.key}`, { range: "bytes=1000-1999" });
    expect(middle.status).toBe(206);
    expect(middle.headers.get("content-range")).toBe(`bytes 1000-1999/${bytes.length}`);
    expect(middle.bytes.equals(bytes.subarray(1000, 2000))).toBe(true);
    const tail = await getBytes(t, `/media/f/${file.key}`, { range: "bytes=-100" });
    expect(tail.status).toBe(206);
    expect(tail.bytes.equals(bytes.subarray(bytes.length - 100))).toBe(true);
    const open = await getBytes(t, `/media/f/${file.key}`, { range: "bytes=199990-" });
    expect(open.bytes.equals(bytes.subarray(199_990))).toBe(true);
    const outside = await getBytes(t, `/media/f/${file.key}`, { range: `bytes=${bytes.length}-` });
    expect(outside.status).toBe(416);
    expect(JSON.parse(outside.bytes.toString())).toMatchObject({ code: "media.range_unsatisfiable" });

    // If-None-Match with the digest's ETag: 304, no body.
    const again = await getBytes(t, `/media/f/${file.key}`, { "if-none-match": `"${sha256(bytes)}"` });
    expect(again.status).toBe(304);
    expect(again.bytes.length).toBe(0);
    expect(again.headers.get("etag")).toBe(`"${sha256(bytes)}"`);
  });

  it("reads metadata in the namespace without a token, or the bytes with download; another namespace is 404", async () => {
    const token = await t.token(appClaims());
    const bytes = Buffer.from("hello media");
    const { body: file } = await upload(t, token, bytes, "hello.txt", "text/plain");
    const meta = await t.http("GET", `/media/api/v1/app1/files/${file.key}`);
    expect(meta.status).toBe(200);
    expect(meta.body).toEqual({ file });
    const download = await getBytes(t, `/media/api/v1/app1/files/${file.key}?download=true`);
    expect(download.bytes.toString()).toBe("hello media");
    expect(download.headers.get("content-type")).toBe("text/plain");
    const elsewhere = await t.http("GET", `/media/api/v1/app2/files/${file.key}`);
    expect(elsewhere.body).toMatchObject({ status: 404, code: "media.file.not_found" });
    const missing = await t.http("GET", `/media/f/${"B".repeat(24)}`);
    expect(missing.body).toMatchObject({ status: 404, code: "media.file.not_found" });
    const malformed = await t.http("GET", `/media/f/not-a-key`);
    expect(malformed.body).toMatchObject({ status: 400, code: "request.invalid", field: "key" });
  });

  it("serves HTML, SVG and XML as attachments, never to be run on the platform's origin", async () => {
    const token = await t.token(appClaims());
    for (const [name, type] of [
      ["page.html", "text/html"],
      ["image.svg", "image/svg+xml"],
      ["feed.xml", "application/xml"],
    ]) {
      const { body: file } = await upload(t, token, Buffer.from("<script>alert(1)</script>"), name, type);
      const served = await getBytes(t, `/media/f/${file.key}`);
      expect(served.headers.get("content-disposition"), type).toMatch(/^attachment; /);
      expect(served.headers.get("x-content-type-options")).toBe("nosniff");
      expect(served.headers.get("content-security-policy")).toBe("default-src 'none'; sandbox");
    }
  });

  it("refuses bad uploads with a clear problem, storing nothing", async () => {
    const token = await t.token(appClaims());
    const rows = await rowCount(t);
    const objects = await stored();
    const file = { name: "file", filename: "a.bin", type: "application/octet-stream", data: randomBytes(70_000) };
    const cases: [string, Promise<{ status: number; body: any }>, number, string, string?][] = [
      [
        "a truncated multipart body",
        postUpload(t, "app1", multipart([file], { close: false }), { token }),
        400,
        "request.invalid",
        "body",
      ],
      [
        "two file parts",
        postUpload(t, "app1", multipart([file, { ...file, filename: "b.bin" }]), { token }),
        400,
        "request.invalid",
        "file",
      ],
      [
        "no file part",
        postUpload(t, "app1", multipart([{ name: "note", data: "x" }]), { token }),
        400,
        "request.invalid",
        "file",
      ],
      [
        "a JSON body",
        postUpload(t, "app1", Buffer.from("{}"), { token, type: "application/json" }),
        415,
        "request.unsupported_media_type",
      ],
      ["a path in the name", upload(t, token, randomBytes(10), "../../etc/passwd"), 400, "request.invalid", "name"],
      ["a Windows path in the name", upload(t, token, randomBytes(10), "..\\boot.ini"), 400, "request.invalid", "name"],
      ["a name of dots", upload(t, token, randomBytes(10), ".."), 400, "request.invalid", "name"],
      [
        "not a media type",
        postUpload(t, "app1", randomBytes(10), {
          token,
          type: "application/octet-stream",
          query: "?name=a.bin&content_type=nonsense",
        }),
        400,
        "request.invalid",
        "content_type",
      ],
      [
        "another app's namespace",
        upload(t, token, randomBytes(10), "a.bin", "x/y", "app2"),
        403,
        "media.namespace_refused",
      ],
    ];
    for (const [what, sent, status, code, field] of cases) {
      const answer = await sent;
      expect(answer.status, what).toBe(status);
      expect(answer.body, what).toMatchObject({ status, code, ...(field && { field }) });
    }
    expect(await rowCount(t)).toBe(rows);
    expect(await stored()).toEqual(objects);
  });
}
