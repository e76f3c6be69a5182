import { create } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { FileReadRequestSchema, FileUploadSchema, MediaService } from "../../gen/pf/media/v1/media_pb.js";
import { ProblemSchema } from "../../gen/pf/v1/problem_pb.js";
import { usePlatform } from "../support/platform.js";
import { appClaims, rowCount, sha256 } from "./support.js";

const t = usePlatform({ services: ["media"], env: { PF_MEDIA_MAX_BYTES: String(256 * 1024) } });

async function* parts(app: string, bytes: Buffer, extra: object = {}) {
  yield create(FileUploadSchema, { app, name: "r.bin", contentType: "application/octet-stream", ...extra });
  for (let at = 0; at < bytes.length; at += 32 * 1024)
    yield create(FileUploadSchema, { chunk: bytes.subarray(at, at + 32 * 1024) });
}

const problemOf = (error: unknown) => ConnectError.from(error).findDetails(ProblemSchema)[0];

describe("media over RPC", () => {
  it("uploads as a client stream (names first, then chunks) and reads the bytes as a server stream", async () => {
    const client = t.client(MediaService, await t.token(appClaims()));
    const bytes = randomBytes(100_000);
    const file = await client.uploadFile(parts("app1", bytes));
    expect(file).toMatchObject({ app: "app1", size: BigInt(bytes.length), sha256: sha256(bytes) });
    const chunks: Uint8Array[] = [];
    for await (const message of client.serveFile(create(FileReadRequestSchema, { key: file.key })))
      if (message.body) chunks.push(message.body.data);
    expect(sha256(Buffer.concat(chunks))).toBe(sha256(bytes));
  });

  it("refuses a stream over the cap (413 media.too_large), names after the first message, and another route's fields", async () => {
    const client = t.client(MediaService, await t.token(appClaims()));
    const rows = await rowCount(t);
    const over = await client.uploadFile(parts("app1", randomBytes(300 * 1024))).catch(problemOf);
    expect(over).toMatchObject({ status: 413, code: "media.too_large" });
    async function* renamed() {
      yield* parts("app1", randomBytes(1000));
      yield create(FileUploadSchema, { name: "again.bin" });
    }
    expect(await client.uploadFile(renamed()).catch(problemOf)).toMatchObject({
      status: 400,
      extensions: { field: "name" },
    });
    expect(await rowCount(t)).toBe(rows);
    const foreign = async () => {
      for await (const _ of client.serveFile(create(FileReadRequestSchema, { key: "A".repeat(24), app: "app1" })))
        void _;
    };
    expect(await foreign().catch(problemOf)).toMatchObject({
      status: 400,
      code: "request.invalid",
      extensions: { field: "app" },
    });
  });
});
