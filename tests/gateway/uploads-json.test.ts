import { create, createRegistry, type JsonObject } from "@bufbuild/protobuf";
import { createRouterTransport } from "@connectrpc/connect";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bindingsOf } from "../../gateway/bindings.js";
import { openApiDocument } from "../../gateway/openapi.js";
import { registerBindings } from "../../gateway/routes.js";
import { MediaService, type FileUpload } from "../../gen/pf/media/v1/media_pb.js";
import { JobSchema, type JobCreateRequest } from "../../gen/pf/tools/v1/jobs_pb.js";
import { RunSchema, type RunRequest } from "../../gen/pf/tools/v1/runs_pb.js";
import { ToolsService } from "../../gen/pf/tools/v1/tools_pb.js";
import { createLogger } from "../../services/kit/runtime/logger.js";
import { BOUNDARY, multipart, type Part } from "../media/support.js";
import { admitEveryone } from "./support.js";

/** The JSON body limit these routes are given (PF_BODY_LIMIT), well under the uploads' max_bytes. */
const BODY_LIMIT = 4096;

/** What one call of an upload RPC read: its messages, and whether its stream ended well or failed. */
interface Call {
  rpc: "runTool" | "createJob" | "uploadFile";
  messages: (RunRequest | JobCreateRequest)[];
  ended?: "complete" | "failed";
}

/**
 * Tools' two upload routes (RunTool: POST /tools/api/v1/tools/{id}/run; CreateJob: POST /tools/api/v1/jobs), whose
 * `media_types` list application/json beside multipart/form-data, over scripted RPCs in memory that keep what they
 * read; and media's upload, whose list does not.
 */
describe("an upload route taking JSON bodies and form fields of any field type", () => {
  const calls: Call[] = [];
  let app: FastifyInstance;
  let base: string;

  /** Reads a stream of messages into a call, noting how it ended. */
  async function read<M extends Call["messages"][number] | FileUpload>(rpc: Call["rpc"], requests: AsyncIterable<M>) {
    const call: Call = { rpc, messages: [] };
    calls.push(call);
    try {
      for await (const message of requests) call.messages.push(message as Call["messages"][number]);
      call.ended = "complete";
    } catch (error) {
      call.ended = "failed";
      throw error;
    }
    return call.messages as M[];
  }

  beforeAll(async () => {
    const transport = createRouterTransport((router) => {
      router.service(ToolsService, {
        runTool: async (requests) => {
          const [first] = await read("runTool", requests);
          return create(RunSchema, { tool: first.id, state: "succeeded", output: first.input });
        },
        createJob: async (requests) => {
          const [first] = await read("createJob", requests);
          return create(JobSchema, { id: "job_1", tool: first.tool, state: "queued", input: first.input });
        },
      });
      router.service(MediaService, {
        uploadFile: async (requests) => (await read("uploadFile", requests), {}),
      });
    });
    app = Fastify();
    const context = {
      transport,
      admission: admitEveryone,
      timeoutMs: 5000,
      bodyLimit: BODY_LIMIT,
      registry: createRegistry(),
      logger: createLogger("silent"),
    };
    registerBindings(app, [...bindingsOf(ToolsService), ...bindingsOf(MediaService)], {}, context);
    base = await app.listen({ port: 0, host: "127.0.0.1" });
  });
  afterAll(() => app?.close());

  /** Posts a body; answers the status, the JSON answer, and the call of the RPC it made (if it made one). */
  async function post(path: string, body: RequestInit["body"], type = "application/json") {
    const before = calls.length;
    const response = await fetch(`${base}${path}`, {
      method: "POST",
      headers: { "content-type": type },
      body,
      duplex: "half",
    } as RequestInit);
    const answer = (await response.json()) as JsonObject;
    return { status: response.status, answer, call: calls[before] as Call | undefined };
  }

  const run = (body: RequestInit["body"], query = "", type?: string) =>
    post(`/tools/api/v1/tools/text.hash/run${query}`, body, type);
  const json = (value: unknown) => JSON.stringify(value);
  const form = (parts: Part[]) => [multipart(parts), `multipart/form-data; boundary=${BOUNDARY}`] as const;
  const runForm = (parts: Part[]) => post("/tools/api/v1/tools/text.hash/run", ...form(parts));

  it("decodes a JSON body as the stream's first and only message, with the path and query merged in", async () => {
    const { status, answer, call } = await run(json({ input: { text: "hi", rounds: 2 } }), "?wait_ms=250");
    expect(status).toBe(200);
    expect(answer).toMatchObject({ tool: "text.hash", state: "succeeded", output: { text: "hi", rounds: 2 } });
    expect(call?.ended).toBe("complete");
    expect(call!.messages).toHaveLength(1);
    const [first] = call!.messages as RunRequest[];
    expect({ id: first.id, waitMs: first.waitMs, fileName: first.fileName, chunk: first.chunk.length }).toEqual({
      id: "text.hash",
      waitMs: 250,
      fileName: "",
      chunk: 0,
    });
    expect(first.input).toEqual({ text: "hi", rounds: 2 });
  });

  it("takes lowerCamel names, a charset parameter and an empty body (the path's fields alone), as JSON routes do", async () => {
    const camel = await post(
      "/tools/api/v1/jobs",
      json({ tool: "img.process", mediaKeys: ["A".repeat(24)], idempotencyKey: "k1" }),
      "application/json; charset=utf-8",
    );
    expect(camel.status).toBe(201);
    expect(camel.call!.messages[0]).toMatchObject({
      tool: "img.process",
      mediaKeys: ["A".repeat(24)],
      idempotencyKey: "k1",
    });
    const empty = await run("");
    expect(empty.status).toBe(200);
    expect(empty.call!.messages).toHaveLength(1);
    expect(empty.call!.messages[0]).toMatchObject({ id: "text.hash" });
    expect(empty.call!.messages[0].input).toBeUndefined();
  });

  it("refuses a malformed body, an unknown field and a body that is no object (400 as JSON routes), never calling the RPC", async () => {
    const bodies: [string, string, string][] = [
      ["malformed JSON", "{not json", "body"],
      ["an unknown field", json({ input: {}, bogus: 1 }), "bogus"],
      ["an array", json([1, 2]), "body"],
      ["a number", "7", "body"],
      ["a prototype-poisoning key", '{"input": {"__proto__": {"admin": true}}}', "body"],
      ["an input that is no object", json({ input: [1] }), "input"],
      ["a wait that is no number", json({ wait_ms: "soon" }), "wait_ms"],
    ];
    for (const [what, body, field] of bodies) {
      const { status, answer, call } = await run(body);
      expect([what, status, answer.code, answer.field]).toEqual([what, 400, "request.invalid", field]);
      expect(call, what).toBeUndefined();
    }
    const { answer } = await run(json({ input: {}, bogus: 1 }));
    expect(answer.detail).toContain("bogus");
  });

  it("refuses a JSON body naming the file it cannot carry: its bytes, name or type (400 naming the field)", async () => {
    for (const [body, field] of [
      [{ chunk: "aGk=" }, "chunk"],
      [{ file_name: "a.png" }, "file_name"],
      [{ fileType: "image/png" }, "file_type"],
    ] as const) {
      const { status, answer, call } = await run(json(body));
      expect([status, answer.code, answer.field]).toEqual([400, "request.invalid", field]);
      expect(call).toBeUndefined();
    }
  });

  it("refuses a field given in the body and again in the query, and a body naming another tool than the path", async () => {
    const twice = await run(json({ wait_ms: 5 }), "?wait_ms=6");
    expect([twice.status, twice.answer.field]).toEqual([400, "wait_ms"]);
    const other = await run(json({ id: "text.other" }));
    expect([other.status, other.answer.field]).toEqual([400, "id"]);
    expect(twice.call ?? other.call).toBeUndefined();
    // The same tool in both is the path's.
    expect((await run(json({ id: "text.hash" }))).status).toBe(200);
  });

  it("bounds a JSON body by the JSON body limit, not max_bytes: a declared length at once, a streamed body as it grows (413)", async () => {
    const big = json({ input: { text: "x".repeat(BODY_LIMIT) } });
    const declared = await run(big);
    expect([declared.status, declared.answer.code]).toEqual([413, "request.too_large"]);
    expect(declared.answer.detail).toContain(String(BODY_LIMIT));
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        const bytes = Buffer.from(big);
        for (let at = 0; at < bytes.length; at += 1024) controller.enqueue(bytes.subarray(at, at + 1024));
        controller.close();
      },
    });
    const streamed = await run(stream);
    expect([streamed.status, streamed.answer.code]).toEqual([413, "request.too_large"]);
    expect(declared.call ?? streamed.call).toBeUndefined();
    // Just under it is read.
    const fits = json({ input: { text: "x".repeat(BODY_LIMIT - 40) } });
    expect(Buffer.byteLength(fits)).toBeLessThanOrEqual(BODY_LIMIT);
    expect((await run(fits)).status).toBe(200);
  });

  it("answers 415 to a media type the route does not list, and to JSON where the route lists no JSON", async () => {
    const text = await run("hello", "", "text/plain");
    expect([text.status, text.answer.code]).toEqual([415, "request.unsupported_media_type"]);
    expect(text.answer.detail).toContain("application/json or multipart/form-data");
    const media = await post("/media/api/v1/app1/files", json({ name: "a.txt" }));
    expect([media.status, media.answer.code]).toEqual([415, "request.unsupported_media_type"]);
    expect(text.call ?? media.call).toBeUndefined();
  });

  it("reads a form's message field as its JSON text and a repeated field from repeated form fields", async () => {
    const files: Part[] = [{ name: "files", filename: "a.png", type: "image/png", data: "png" }];
    const [body, type] = form([
      { name: "tool", data: "img.process" },
      { name: "input", data: json({ width: 64, format: "webp", strip: true }) },
      { name: "media_keys", data: "A".repeat(24) },
      { name: "mediaKeys", data: "B".repeat(24) },
      ...files,
    ]);
    // Both spellings of one field are one field given twice: refused as for the query.
    const spelled = await post("/tools/api/v1/jobs", body, type);
    expect([spelled.status, spelled.answer.field]).toEqual([400, "media_keys"]);

    const [good, goodType] = form([
      { name: "tool", data: "img.process" },
      { name: "input", data: json({ width: 64, format: "webp", strip: true }) },
      { name: "media_keys", data: "A".repeat(24) },
      { name: "media_keys", data: "B".repeat(24) },
      ...files,
    ]);
    const { status, call } = await post("/tools/api/v1/jobs", good, goodType);
    expect(status).toBe(201);
    expect(call?.ended).toBe("complete");
    const [first, ...rest] = call!.messages as JobCreateRequest[];
    expect(first).toMatchObject({ tool: "img.process", mediaKeys: ["A".repeat(24), "B".repeat(24)] });
    expect(first).toMatchObject({ fileName: "a.png", fileType: "image/png" });
    expect(first.input).toEqual({ width: 64, format: "webp", strip: true });
    expect(Buffer.concat(rest.map((message) => message.chunk)).toString()).toBe("png");

    const single = await post(
      "/tools/api/v1/jobs",
      ...form([{ name: "tool", data: "img.process" }, { name: "media_keys", data: "C".repeat(24) }, ...files]),
    );
    expect(single.call!.messages[0]).toMatchObject({ mediaKeys: ["C".repeat(24)] });
  });

  it("refuses a form's message field whose text is no JSON, or JSON the field does not take (400 naming it)", async () => {
    const file: Part = { name: "files", filename: "a.txt", type: "text/plain", data: "a" };
    for (const [what, text] of [
      ["no JSON", "{width: 64"],
      ["a list for an object", "[1]"],
      ["a prototype-poisoning key", '{"__proto__": {"x": 1}}'],
      ["JSON nested too deep", "[".repeat(65) + "]".repeat(65)],
    ]) {
      const { status, answer, call } = await runForm([{ name: "input", data: text }, file]);
      expect([what, status, answer.code, answer.field]).toEqual([what, 400, "request.invalid", "input"]);
      expect([what, call?.ended ?? "failed"]).toEqual([what, "failed"]);
    }
    // Given twice, a message field is refused as any single field is.
    const twice = await runForm([{ name: "input", data: "{}" }, { name: "input", data: "{}" }, file]);
    expect([twice.status, twice.answer.field]).toEqual([400, "input"]);
  });

  it("documents both bodies: the JSON message without the path's and the file's fields, and the form with its JSON-text fields", () => {
    const document = openApiDocument(bindingsOf(ToolsService), { title: "tools", basePath: "/tools" }) as any;
    const content = document.paths["/api/v1/tools/{id}/run"].post.requestBody.content;
    expect(Object.keys(content)).toEqual(["application/json", "multipart/form-data"]);
    const jsonBody = content["application/json"];
    expect(Object.keys(jsonBody.schema.properties).sort()).toEqual(["input", "wait_ms"]);
    expect(jsonBody.example).toBeInstanceOf(Object);
    expect(jsonBody.example).not.toHaveProperty("id");
    const formBody = content["multipart/form-data"].schema;
    expect(formBody.required).toEqual(["files"]);
    expect(formBody.properties.files).toEqual({
      type: "array",
      items: { type: "string", format: "binary" },
      minItems: 1,
    });
    expect(formBody.properties.input).toMatchObject({ type: "string", contentMediaType: "application/json" });
    const jobs = document.paths["/api/v1/jobs"].post.requestBody.content;
    expect(Object.keys(jobs["application/json"].schema.properties).sort()).toEqual([
      "idempotency_key",
      "input",
      "media_keys",
      "tool",
    ]);
    // media_keys is a query parameter too (repeated), so the form documents only the JSON text beside the files.
    expect(Object.keys(jobs["multipart/form-data"].schema.properties).sort()).toEqual(["files", "input"]);
  });
});
