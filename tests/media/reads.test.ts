import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { usePlatform } from "../support/platform.js";
import { appClaims, getBytes, upload } from "./support.js";

const t = usePlatform({ services: ["media"] });

describe("reads of a file's bytes", () => {
  it("answer HEAD with the Content-Length and headers a GET has, and no body (whole, and a range)", async () => {
    const bytes = randomBytes(200_000);
    const { body: file } = await upload(t, await t.token(appClaims()), bytes);
    for (const path of [`/media/f/${file.key}`, `/media/api/v1/app1/files/${file.key}?download=true`]) {
      const head = await fetch(t.gatewayUrl + path, { method: "HEAD" });
      expect(head.status, path).toBe(200);
      expect(head.headers.get("content-length"), path).toBe(String(bytes.length));
      expect(head.headers.get("etag")).toBe(`"${file.sha256}"`);
      expect(head.headers.get("accept-ranges")).toBe("bytes");
      expect((await head.arrayBuffer()).byteLength).toBe(0);
      const part = await fetch(t.gatewayUrl + path, { method: "HEAD", headers: { range: "bytes=10-19" } });
      expect(part.status).toBe(206);
      expect(part.headers.get("content-length")).toBe("10");
      expect(part.headers.get("content-range")).toBe(`bytes 10-19/${bytes.length}`);
    }
  });

  it("answer a range outside the file 416 with Content-Range: bytes */<size>", async () => {
    const bytes = randomBytes(5000);
    const { body: file } = await upload(t, await t.token(appClaims()), bytes);
    for (const range of ["bytes=5000-", "bytes=9000-9999"]) {
      const outside = await getBytes(t, `/media/f/${file.key}`, { range });
      expect(outside.status, range).toBe(416);
      expect(outside.headers.get("content-range"), range).toBe("bytes */5000");
      expect(JSON.parse(outside.bytes.toString())).toMatchObject({ code: "media.range_unsatisfiable", size: 5000 });
    }
  });
});
