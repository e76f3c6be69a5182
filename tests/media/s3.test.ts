import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePorts } from "../support/ports.js";
import { usePlatform } from "../support/platform.js";
import { TcpProxy } from "../support/tcp-proxy.js";
import { describeRoundTrip } from "./round-trip.js";
import { TestS3 } from "./s3.js";
import { appClaims, rowCount, streamUpload } from "./support.js";

const MIB = 1024 * 1024;
const [s3Port, proxyPort] = await freePorts(2);
const s3 = new TestS3(s3Port);
// The platform reaches the store through a proxy a test can cut.
const proxy = new TcpProxy("127.0.0.1", s3Port);
proxy.port = proxyPort;

beforeAll(async () => {
  await s3.start();
  await proxy.open();
});
afterAll(async () => {
  await proxy.cut();
  await s3.stop();
});

const t = usePlatform({ services: ["media"], env: { ...s3.env(proxyPort), PF_MEDIA_MAX_BYTES: String(64 * MIB) } });

describe("media files on an S3-compatible store (s3rver)", () => {
  describeRoundTrip(t, () => s3.keys());

  it("keeps each object in the bucket under media/<key>", async () => {
    const answer = await streamUpload(t, await t.token(appClaims()), 11 * MIB);
    expect(answer.status).toBe(201);
    expect(answer.body.size).toBe(String(11 * MIB));
    expect(await s3.keys()).toContain(`media/${answer.body.key}`);
  });

  it("answers 503 when the store goes away mid-upload, leaving no object and no row", async () => {
    const [rows, objects] = [await rowCount(t), await s3.keys()];
    let cut: Promise<void> | undefined;
    const answer = await streamUpload(t, await t.token(appClaims()), 40 * MIB, {
      // Past the first part (5 MiB): a multipart upload is under way when the store goes.
      written: (bytes) => {
        if (bytes >= 12 * MIB) cut ??= proxy.cut();
      },
    });
    await cut;
    expect(answer.status).toBe(503);
    expect(answer.body).toMatchObject({ status: 503, code: "media.store_unavailable" });
    await proxy.open();
    expect(await s3.keys()).toEqual(objects);
    expect(await rowCount(t)).toBe(rows);
  });
});
