import { randomBytes } from "node:crypto";
import { create, createRegistry, setExtension, type Message } from "@bufbuild/protobuf";
import { MethodOptionsSchema, ServiceOptionsSchema } from "@bufbuild/protobuf/wkt";
import { createRouterTransport } from "@connectrpc/connect";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bindingsOf } from "../../gateway/bindings.js";
import { openApiDocument } from "../../gateway/openapi.js";
import { registerBindings } from "../../gateway/routes.js";
import { http } from "../../gen/google/api/annotations_pb.js";
import { HttpRuleSchema } from "../../gen/google/api/http_pb.js";
import { service_key, upload, UploadSchema } from "../../gen/pf/v1/options_pb.js";
import { createLogger } from "../../services/kit/runtime/logger.js";
import { BOUNDARY, multipart, type Part } from "../media/support.js";
import { probeService } from "../support/probe-service.js";
import { admitEveryone } from "./support.js";

const KIB = 1024;
const MAX_BYTES = 1536 * KIB;

/** The probe's `Upload` RPC as a many_files upload route: POST /probe/api/v1/sites/{id}/files, bytes in `chunk`. */
function manyFilesProbe() {
  const options = create(MethodOptionsSchema);
  setExtension(
    options,
    http,
    create(HttpRuleSchema, { pattern: { case: "post", value: "/api/v1/sites/{id}/files" }, body: "chunk" }),
  );
  setExtension(
    options,
    upload,
    create(UploadSchema, {
      maxBytes: BigInt(MAX_BYTES),
      mediaTypes: ["multipart/form-data", "application/x-tar"],
      nameField: "name",
      typeField: "content_type",
      manyFiles: true,
    }),
  );
  const serviceOptions = create(ServiceOptionsSchema);
  setExtension(serviceOptions, service_key, "probe");
  return probeService([{ name: "Upload", options, upload: true }], serviceOptions);
}

/** One message of the probe's upload as its RPC read it. */
interface Received {
  id: string;
  note: string;
  name: string;
  contentType: string;
  chunk: Uint8Array;
}

/** What one call of the RPC read: its messages in order, and whether its stream ended well or failed. */
interface Call {
  messages: Received[];
  ended?: "complete" | "failed";
}

/** A file as the RPC's messages carry it: a message without bytes starts it, its chunks follow. */
function filesOf(messages: Received[]) {
  const files: { name: string; type: string; chunks: number; bytes: Buffer }[] = [];
  for (const message of messages) {
    if (message.chunk.length === 0)
      files.push({ name: message.name, type: message.contentType, chunks: 0, bytes: Buffer.alloc(0) });
    else {
      const file = files.at(-1)!;
      file.chunks += 1;
      file.bytes = Buffer.concat([file.bytes, message.chunk]);
    }
  }
  return files;
}

describe("a many_files upload route", () => {
  const service = manyFilesProbe();
  const calls: Call[] = [];
  let app: FastifyInstance;
  let url: string;

  beforeAll(async () => {
    const transport = createRouterTransport((router) =>
      router.service(service, {
        upload: async (requests: AsyncIterable<Message>) => {
          const call: Call = { messages: [] };
          calls.push(call);
          try {
            for await (const message of requests) call.messages.push(message as unknown as Received);
            call.ended = "complete";
          } catch (error) {
            call.ended = "failed";
            throw error;
          }
          return {};
        },
      } as never),
    );
    app = Fastify();
    const context = {
      transport,
      admission: admitEveryone,
      timeoutMs: 1000,
      registry: createRegistry(),
      logger: createLogger("silent"),
    };
    registerBindings(app, bindingsOf(service), {}, context);
    url = `${await app.listen({ port: 0, host: "127.0.0.1" })}/probe/api/v1/sites/sit_1/files`;
  });
  afterAll(() => app?.close());

  /** Posts a body; answers the status, the problem's code, and the call of the RPC it made (if it made one). */
  async function post(body: RequestInit["body"], type = `multipart/form-data; boundary=${BOUNDARY}`) {
    const before = calls.length;
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": type },
      body,
      duplex: "half",
    } as RequestInit);
    const answer = (await response.json()) as { code?: string };
    return { status: response.status, code: answer.code, call: calls[before] as Call | undefined };
  }

  it("sends each file part as a message naming it, then its bytes, in order, the first with the path and form fields", async () => {
    const big = randomBytes(1024 * KIB);
    const parts: Part[] = [
      { name: "note", data: "first deploy" },
      { name: "files", filename: "index.html", type: "text/html", data: "<h1>hi</h1>" },
      { name: "files", filename: "assets/big.bin", type: "application/octet-stream", data: big },
      { name: "files", filename: "empty.txt", type: "text/plain", data: "" },
      { name: "files", filename: "../x", type: "image/png", data: Buffer.from([0x89, 0x50, 0x4e, 0x47]) },
    ];
    const { status, call } = await post(multipart(parts));
    expect(status).toBe(200);
    expect(call?.ended).toBe("complete");
    const starts = call!.messages.filter((message) => message.chunk.length === 0);
    expect(starts.map(({ id, note }) => ({ id, note }))).toEqual([
      { id: "sit_1", note: "first deploy" },
      { id: "", note: "" },
      { id: "", note: "" },
      { id: "", note: "" },
    ]);
    const files = filesOf(call!.messages);
    expect(files.map(({ name, type }) => ({ name, type }))).toEqual([
      { name: "index.html", type: "text/html" },
      { name: "assets/big.bin", type: "application/octet-stream" },
      { name: "empty.txt", type: "text/plain" },
      // The service validates names: the gateway passes them on as sent.
      { name: "../x", type: "image/png" },
    ]);
    expect(files.map((file) => file.bytes.toString("hex"))).toEqual(
      parts.slice(1).map((part) => Buffer.from(part.data).toString("hex")),
    );
    expect(files[1].chunks).toBeGreaterThan(1);
    expect(files[2].chunks).toBe(0);
  });

  it("takes a raw body as one file without a name", async () => {
    const tar = randomBytes(10 * KIB);
    const { status, call } = await post(tar, "application/x-tar");
    expect(status).toBe(200);
    expect(call?.ended).toBe("complete");
    expect(call!.messages[0]).toMatchObject({ id: "sit_1", name: "", contentType: "application/x-tar" });
    expect(filesOf(call!.messages).map((file) => [file.name, file.bytes.equals(tar)])).toEqual([["", true]]);
  });

  it("bounds the whole body by max_bytes, across its files: 413 once their sum passes it, and the RPC's stream fails", async () => {
    const file = (name: string): Part => ({
      name: "files",
      filename: name,
      type: "application/octet-stream",
      data: Buffer.alloc(1024 * KIB, 7),
    });
    const body = multipart([file("a.bin"), file("b.bin")]);
    // Streamed without a declared length: the gateway counts what arrives.
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let at = 0; at < body.length; at += 64 * KIB) controller.enqueue(body.subarray(at, at + 64 * KIB));
        controller.close();
      },
    });
    const { status, code, call } = await post(stream);
    expect([status, code]).toEqual([413, "request.too_large"]);
    expect(call?.ended).toBe("failed");
    // Each file is under the limit: the first arrived whole, the second began.
    const files = filesOf(call!.messages);
    expect(files.map((each) => each.name)).toEqual(["a.bin", "b.bin"]);
    expect(files[0].bytes.length).toBe(1024 * KIB);
  });

  it("refuses a malformed form, a file part without a name, a field after a file and a form without files (400)", async () => {
    const file: Part = { name: "files", filename: "a.txt", type: "text/plain", data: "a" };
    const bodies: [string, Buffer, string?][] = [
      ["a form that ends early", multipart([file], { close: false })],
      [
        "a part header that cannot be read",
        Buffer.from(`--${BOUNDARY}\r\nContent-Disposition form-data\r\n\r\nx\r\n--${BOUNDARY}--\r\n`),
      ],
      ["no boundary", multipart([file]), "multipart/form-data"],
      [
        "a nameless file part after the first",
        multipart([file, { name: "files", type: "application/octet-stream", data: "b" }]),
      ],
      ["a nameless first file part", multipart([{ name: "files", type: "application/octet-stream", data: "b" }, file])],
      ["a field after a file", multipart([file, { name: "note", data: "late" }])],
      ["a part with an empty filename after a file", multipart([file, { name: "files", filename: "", data: "b" }])],
      ["no file part", multipart([{ name: "note", data: "only" }])],
    ];
    for (const [what, body, type] of bodies) {
      const { status, code, call } = await post(body, type);
      expect([what, status, code]).toEqual([what, 400, "request.invalid"]);
      expect([what, call?.ended ?? "failed"]).toEqual([what, "failed"]);
    }
  });

  it("documents its multipart body as an array of files, and raw bodies as bytes", () => {
    const document = openApiDocument(bindingsOf(service), { title: "probe", basePath: "/probe" }) as any;
    const content = document.paths["/api/v1/sites/{id}/files"].post.requestBody.content;
    expect(content["multipart/form-data"].schema).toEqual({
      type: "object",
      properties: { files: { type: "array", items: { type: "string", format: "binary" }, minItems: 1 } },
      required: ["files"],
    });
    expect(content["application/x-tar"].schema).toEqual({ type: "string", format: "binary" });
  });
});
