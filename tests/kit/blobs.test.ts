import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FsBlobStore } from "../../services/kit/blobs/fs-store.js";
import { measured, TooLargeError, type Measured } from "../../services/kit/blobs/measure.js";
import { S3BlobStore } from "../../services/kit/blobs/s3-store.js";
import { BlobMissingError, BlobUnavailableError, type BlobStore } from "../../services/kit/blobs/store.js";
import { BUCKET, TestS3 } from "../media/s3.js";
import { freePorts } from "../support/ports.js";

const MIB = 1024 * 1024;
const [s3Port, deadPort] = await freePorts(2);
const s3 = new TestS3(s3Port);
let root = "";

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "pf-blobs-"));
  await s3.start();
});
afterAll(async () => {
  await s3.stop();
  await rm(root, { recursive: true, force: true });
});

const s3Store = (port = s3Port) =>
  new S3BlobStore({
    endpoint: `http://127.0.0.1:${port}`,
    bucket: BUCKET,
    region: "us-east-1",
    accessKeyId: "S3RVER",
    secretAccessKey: "S3RVER",
    partBytes: 5 * MIB,
  });

/** A body of `bytes` in chunks of `chunk`, failing with `error` after `failAfter` bytes when given. */
async function* bodyOf(bytes: Buffer, chunk = 64 * 1024, failAfter?: number, error = new Error("client gone")) {
  for (let at = 0; at < bytes.length; at += chunk) {
    if (failAfter !== undefined && at >= failAfter) throw error;
    yield bytes.subarray(at, at + chunk);
  }
}

async function read(store: BlobStore, key: string, range?: { start: number; end: number }): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of await store.get(key, range)) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

/** Files under a directory, recursively (temporary files included). */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
}

describe.each([
  ["fs", () => new FsBlobStore(join(root, "store")) as BlobStore, () => filesUnder(join(root, "store"))],
  ["s3", () => s3Store() as BlobStore, () => s3.keys()],
])("the %s blob store", (_kind, make, stored) => {
  it("stores and reads back bytes, whole and by range, under a service's prefix", async () => {
    const store = make().scoped("media");
    const bytes = randomBytes(300 * 1024);
    await store.put("k1", bodyOf(bytes), "application/octet-stream");
    expect(await store.has("k1")).toBe(true);
    expect((await read(store, "k1")).equals(bytes)).toBe(true);
    expect((await read(store, "k1", { start: 1000, end: 1999 })).equals(bytes.subarray(1000, 2000))).toBe(true);
    expect(await make().has("k1")).toBe(false);
    expect(await make().has("media/k1")).toBe(true);
    await store.delete("k1");
    expect(await store.has("k1")).toBe(false);
    // Keys may begin with any base64url character ("-" included): media keys do.
    await store.put("-k_2", bodyOf(Buffer.from("dash")), "text/plain");
    expect((await read(store, "-k_2")).toString()).toBe("dash");
    await store.delete("-k_2");
    await expect(store.get("k1")).rejects.toBeInstanceOf(BlobMissingError);
  });

  it("stores an empty body, and a body of several parts (multipart upload on S3)", async () => {
    const store = make();
    await store.put("empty", bodyOf(Buffer.alloc(0)), "text/plain");
    expect((await read(store, "empty")).length).toBe(0);
    const bytes = randomBytes(12 * MIB + 123);
    await store.put("large", bodyOf(bytes, 256 * 1024), "application/octet-stream");
    const back = await read(store, "large");
    expect(createHash("sha256").update(back).digest("hex")).toBe(createHash("sha256").update(bytes).digest("hex"));
    await store.delete("empty");
    await store.delete("large");
  });

  it("leaves nothing when the body fails, small or past several parts, and rethrows the body's own error", async () => {
    const before = await stored();
    const gone = new Error("client gone");
    const store = make();
    await expect(store.put("failed-small", bodyOf(randomBytes(MIB), 64 * 1024, 512 * 1024, gone), "x/y")).rejects.toBe(
      gone,
    );
    await expect(
      store.put("failed-large", bodyOf(randomBytes(13 * MIB), 256 * 1024, 11 * MIB, gone), "x/y"),
    ).rejects.toBe(gone);
    expect(await store.has("failed-small")).toBe(false);
    expect(await store.has("failed-large")).toBe(false);
    expect(await stored()).toEqual(before);
  });

  it("stops a body at its cap while measuring it, storing nothing", async () => {
    const into: Measured = { size: 0, sha256: "" };
    const store = make();
    await expect(store.put("capped", measured(bodyOf(randomBytes(2 * MIB)), MIB, into), "x/y")).rejects.toBeInstanceOf(
      TooLargeError,
    );
    expect(await store.has("capped")).toBe(false);
  });

  it("refuses keys that would leave its directory or prefix", async () => {
    const store = make();
    for (const key of ["../escape", "a/../../b", ".hidden", "a//b", "", "a\\b"])
      await expect(store.put(key, bodyOf(Buffer.from("x")), "x/y"), key).rejects.toThrow(/not a blob key/);
    expect(() => store.scoped("..")).toThrow(/not a blob key/);
    await expect(store.scoped("a").get("../x")).rejects.toThrow(/not a blob key/);
  });
});

describe("measured bodies", () => {
  it("count and hash every byte", async () => {
    const bytes = randomBytes(100_000);
    const into: Measured = { size: 0, sha256: "" };
    for await (const chunk of measured(bodyOf(bytes, 7000), bytes.length, into))
      expect(chunk.length).toBeGreaterThan(0);
    expect(into).toEqual({ size: bytes.length, sha256: createHash("sha256").update(bytes).digest("hex") });
  });
});

describe("an S3 store that does not answer", () => {
  it("fails puts and reads as unavailable, leaving nothing", async () => {
    const store = s3Store(deadPort);
    await expect(store.put("k", bodyOf(randomBytes(1000)), "x/y")).rejects.toBeInstanceOf(BlobUnavailableError);
    await expect(store.get("k")).rejects.toBeInstanceOf(BlobUnavailableError);
  });
});
