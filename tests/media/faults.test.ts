import { request as httpRequest } from "node:http";
import { describe, expect, it } from "vitest";
import { peakGrowth } from "../support/memory.js";
import { usePlatform } from "../support/platform.js";
import { until } from "../support/until.js";
import { appClaims, BOUNDARY, blobFiles, rowCount, streamUpload } from "./support.js";

const MIB = 1024 * 1024;
const GIB = 1024 * MIB;
const t = usePlatform({ services: ["media"], env: { PF_MEDIA_MAX_BYTES: String(64 * MIB) } });

describe("uploads that must not cost what they claim", () => {
  it("refuses a 2 GB upload at the cap while it streams in, without the memory the process holds growing by it", async () => {
    const token = await t.token(appClaims());
    const before = [await rowCount(t), await blobFiles(t)];
    for (const declare of [false, true]) {
      let answer: Awaited<ReturnType<typeof streamUpload>> | undefined;
      const growth = await peakGrowth(async () => (answer = await streamUpload(t, token, 2 * GIB, { declare })));
      expect(answer!.status, `declared: ${declare}`).toBe(413);
      expect(answer!.body).toMatchObject({ code: "media.too_large", limit: 64 * MIB });
      // Refused at the cap: what was sent is about the cap (plus what sockets buffer), not 2 GB.
      expect(answer!.sent).toBeLessThan(96 * MIB);
      // Not by the 2 GB it claims. (Held memory peaked at 59 MiB, about the cap, on one of three runs, under 32 on
      // the others: the bound is the body's eighth, not the cap's half, so that the test does not flake.)
      expect(growth, `memory held grew by ${Math.round(growth / MIB)} MiB`).toBeLessThan((2 * GIB) / 8);
    }
    expect([await rowCount(t), await blobFiles(t)]).toEqual(before);
  });

  it("refuses a body declared past the route's limit before reading it (413 request.too_large)", async () => {
    const answer = await streamUpload(t, await t.token(appClaims()), 5 * GIB, { declare: true });
    expect(answer.status).toBe(413);
    expect(answer.body).toMatchObject({ code: "request.too_large" });
    expect(answer.sent).toBeLessThan(16 * MIB);
  });

  it("answers 401 before reading any of an upload's body", async () => {
    let sent = 0;
    const answer = await streamUpload(t, "not-a-token", 2 * GIB, { declare: true, written: (bytes) => (sent = bytes) });
    expect(answer.status).toBe(401);
    expect(answer.body).toMatchObject({ code: "auth.invalid" });
    expect(sent).toBeLessThan(16 * MIB);
  });

  it("stores nothing when the client goes away mid-upload", async () => {
    const token = await t.token(appClaims());
    const [rows, blobs] = [await rowCount(t), await blobFiles(t)];
    const request = httpRequest(`${t.gatewayUrl}/media/api/v1/app1/files`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": `multipart/form-data; boundary=${BOUNDARY}` },
    });
    request.on("error", () => undefined);
    request.write(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\nContent-Type: x/y\r\n\r\n`,
    );
    request.write(Buffer.alloc(3 * MIB, 1));
    // The temporary file exists while the body arrives; the client then goes away.
    await until(async () => (await blobFiles(t)).some((path) => path.includes("/.tmp/")));
    request.destroy();
    await until(async () => (await blobFiles(t)).length === blobs.length);
    expect([await rowCount(t), await blobFiles(t)]).toEqual([rows, blobs]);
  });
});
