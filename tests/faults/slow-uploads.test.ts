import { request as httpRequest, type ClientRequest } from "node:http";
import { describe, expect, it } from "vitest";
import { appClaims, BOUNDARY, blobFiles, rowCount } from "../media/support.js";
import { usePlatform, type TestPlatform } from "../support/platform.js";
import { every } from "../support/timers.js";
import { until } from "../support/until.js";

const BODY_TIMEOUT_MS = 1_000;
const OPEN_UPLOADS = 3;
const t = usePlatform({
  services: ["media"],
  env: { PF_BODY_TIMEOUT_MS: String(BODY_TIMEOUT_MS), PF_MEDIA_OPEN_UPLOADS: String(OPEN_UPLOADS) },
});

/** An upload into `app` whose body trickles in (`bytes` every `everyMs`, never idle) until answered or stopped. */
function trickle(t: TestPlatform, app: string, token: string, bytes: number, everyMs: number) {
  let request: ClientRequest | undefined;
  let stopTrickling: () => void = () => undefined;
  const began = Date.now();
  const answer = new Promise<{ status: number; body: any; afterMs: number }>((resolve, reject) => {
    request = httpRequest(`${t.gatewayUrl}/media/api/v1/${app}/files`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": `multipart/form-data; boundary=${BOUNDARY}` },
    });
    request.on("response", (response) => {
      stopTrickling();
      const parts: Buffer[] = [];
      response.on("data", (part: Buffer) => parts.push(part));
      response.on("end", () =>
        resolve({
          status: response.statusCode!,
          body: JSON.parse(Buffer.concat(parts).toString()),
          afterMs: Date.now() - began,
        }),
      );
    });
    request.on("error", reject);
    request.write(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="slow.bin"\r\nContent-Type: x/y\r\n\r\n`,
    );
    stopTrickling = every(everyMs, () => request!.write(Buffer.alloc(bytes, 1)));
  });
  // A stopped upload's answer fails (the socket is gone); only those a test awaits matter.
  answer.catch(() => undefined);
  return {
    answer,
    stop() {
      stopTrickling();
      request?.destroy();
    },
  };
}

describe("slow uploads", () => {
  it("answers an upload trickling in below the minimum rate 408 at its deadline, and keeps no temporary file", async () => {
    const [rows, blobs] = [await rowCount(t), await blobFiles(t)];
    // 500 bytes a second, a chunk every 100 ms: the idle timer alone never fires.
    const loris = trickle(t, "app1", await t.token(appClaims()), 50, 100);
    await until(async () => (await blobFiles(t)).some((path) => path.includes("/.tmp/")));
    let answered = false;
    loris.answer.then(
      () => (answered = true),
      () => (answered = true),
    );
    await until(() => answered, 10_000).finally(() => loris.stop());
    const answer = await loris.answer;
    expect(answer.status).toBe(408);
    expect(answer.body).toMatchObject({ code: "request.timeout" });
    // Due the body timeout after it began, plus a second per 4096 bytes that arrived.
    expect(answer.afterMs).toBeGreaterThanOrEqual(BODY_TIMEOUT_MS);
    expect(answer.afterMs).toBeLessThan(3 * BODY_TIMEOUT_MS);
    await until(async () => (await blobFiles(t)).length === blobs.length);
    expect([await rowCount(t), await blobFiles(t)]).toEqual([rows, blobs]);
  });

  it(`caps the uploads one app has open at once (${OPEN_UPLOADS}): the next is 429 rate.limited`, async () => {
    const token = await t.token(appClaims("busy"));
    const open = Array.from({ length: OPEN_UPLOADS }, () => trickle(t, "busy", token, 4096, 100));
    try {
      await until(async () => (await blobFiles(t)).filter((path) => path.includes("/.tmp/")).length === OPEN_UPLOADS);
      const next = trickle(t, "busy", token, 4096, 100);
      const refused = await next.answer.finally(() => next.stop());
      expect(refused.status).toBe(429);
      expect(refused.body).toMatchObject({ code: "rate.limited", rule: "media.upload.open" });
      // Another app is not held up by this one's.
      const other = trickle(t, "other", await t.token(appClaims("other")), 4096, 100);
      await until(async () => (await blobFiles(t)).filter((path) => path.includes("/.tmp/")).length > OPEN_UPLOADS);
      other.stop();
    } finally {
      for (const each of open) each.stop();
    }
  });
});
