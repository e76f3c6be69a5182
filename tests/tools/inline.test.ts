import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { Catalogue } from "../../services/tools/catalogue/index.js";
import { INLINE_TOOLS } from "../../services/tools/families/index.js";
import { BOUNDARY, multipart } from "../media/support.js";
import { usePlatform } from "../support/platform.js";

/**
 * The inline toolbox through the gateway, as anyone runs it (anonymous, JSON): each tool's answer checked against
 * known values, its input refused by its schema before it runs, its own failures answered as failed runs.
 */
const t = usePlatform({ services: ["tools"] });

// Answers are read field by field.
type Json = any;

const run = (tool: string, input: unknown) => t.http("POST", `/tools/api/v1/tools/${tool}/run`, { body: { input } });

/** A run that succeeded: its output. */
async function output(tool: string, input: unknown): Promise<Json> {
  const answer = await run(tool, input);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  expect(answer.body).toMatchObject({ tool, state: "succeeded", cost: 1 });
  expect(answer.body.took_ms).toBeGreaterThanOrEqual(0);
  return answer.body.output;
}

/** A run that ran and failed: its failure. */
async function failure(tool: string, input: unknown): Promise<Json> {
  const answer = await run(tool, input);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  expect(answer.body).toMatchObject({ tool, state: "failed", cost: 1 });
  expect(answer.body.output).toBeUndefined();
  return answer.body.failure;
}

/** A run refused for its input: the problem. */
async function refused(tool: string, input: unknown): Promise<Json> {
  const answer = await run(tool, input);
  expect(answer.status, JSON.stringify(answer.body)).toBe(400);
  expect(answer.body).toMatchObject({ code: "tools.input.invalid", field: "input" });
  return answer.body;
}

describe("the catalogue's inline tools", () => {
  it("each have their implementation, and each implementation its descriptor", () => {
    const inline = new Catalogue().tools.filter(
      (tool) => tool.catalogue === "available" && tool.api && tool.execution === "inline",
    );
    expect(inline.map((tool) => tool.id).sort()).toEqual(Object.keys(INLINE_TOOLS).sort());
    const light = ["text.hash", "text.base64", "text.slug", "text.case", "id.uuid", "data.json-format"];
    for (const id of [...light, "data.json-validate", "qr.code"])
      expect(inline.find((tool) => tool.id === id)).toMatchObject({ quotaClass: "light", auth: { anonymous: true } });
  });
});

describe("text.hash", () => {
  it("answers the standard digests of abc, in hex and base64", async () => {
    const digest = async (algorithm: string, encoding = "hex") =>
      (await output("text.hash", { text: "abc", algorithm, encoding })).digest;
    expect(await digest("md5")).toBe("900150983cd24fb0d6963f7d28e17f72");
    expect(await digest("sha1")).toBe("a9993e364706816aba3e25717850c26c9cd0d89d");
    expect(await digest("sha256")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(await digest("sha512")).toBe(
      "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
    );
    expect(await digest("sha256", "base64")).toBe("ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0=");
  });

  it("hashes the text's UTF-8 bytes, SHA-256 in hex unless asked otherwise", async () => {
    expect(await output("text.hash", { text: "é" })).toEqual({
      algorithm: "sha256",
      encoding: "hex",
      digest: "4a99557e4033c3539de2eb65472017cad5f9557f7a0625a09f1c3f6e2ba69c4c",
    });
    expect((await output("text.hash", { text: "" })).digest).toBe(
      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    );
  });

  it("refuses an input its schema does not take, naming each fault, before it runs", async () => {
    const problem = await refused("text.hash", { text: 7, algorithm: "crc32", colour: "red" });
    expect(problem.errors).toEqual(
      expect.arrayContaining([
        { pointer: "/text", message: "must be string" },
        { pointer: "/algorithm", message: "must be equal to one of the allowed values" },
        { pointer: "/colour", message: "is not a member this schema knows" },
      ]),
    );
    expect((await refused("text.hash", {})).errors).toEqual([{ pointer: "/text", message: "is required" }]);
  });
});

describe("text.base64", () => {
  const text = "héllo wörld?>~";
  it("encodes UTF-8 text in the standard and the URL-safe alphabets, and decodes either back", async () => {
    expect(await output("text.base64", { text, direction: "encode" })).toEqual({ text: "aMOpbGxvIHfDtnJsZD8+fg==" });
    expect(await output("text.base64", { text, direction: "encode", url_safe: true })).toEqual({
      text: "aMOpbGxvIHfDtnJsZD8-fg",
    });
    expect(await output("text.base64", { text: "aMOpbGxvIHfDtnJsZD8+fg==", direction: "decode" })).toEqual({ text });
    expect(await output("text.base64", { text: "aMOpbGxv IHfDtnJs\nZD8-fg", direction: "decode" })).toEqual({ text });
  });

  it("fails a decode of what is not base64, or not UTF-8 text, rather than answering what it could read", async () => {
    expect(await failure("text.base64", { text: "abc$", direction: "decode" })).toEqual({
      code: "tools.input.invalid",
      detail: "The text is not base64.",
    });
    expect(await failure("text.base64", { text: "a", direction: "decode" })).toMatchObject({
      code: "tools.input.invalid",
    });
    // 0xff 0xfe: no UTF-8 text.
    expect((await failure("text.base64", { text: "//4=", direction: "decode" })).detail).toMatch(/not UTF-8/);
    await refused("text.base64", { text: "x", direction: "sideways" });
  });
});

describe("text.slug and text.case", () => {
  it("spell any script in Latin as a slug, within max_length", async () => {
    expect(await output("text.slug", { text: "Привет, мир!" })).toEqual({ slug: "privet-mir" });
    expect(await output("text.slug", { text: "Ærøskøbing — a Danish town", max_length: 12 })).toEqual({
      slug: "aeroskobing",
    });
    expect(await output("text.slug", { text: "🙂" })).toEqual({ slug: "" });
  });

  it("change a text's case, splitting words at spaces, punctuation and camelCase humps", async () => {
    const text = "parseHTTPResponse body, v2";
    const cases: Record<string, string> = {
      snake: "parse_http_response_body_v2",
      kebab: "parse-http-response-body-v2",
      camel: "parseHttpResponseBodyV2",
      pascal: "ParseHttpResponseBodyV2",
      constant: "PARSE_HTTP_RESPONSE_BODY_V2",
      upper: "PARSEHTTPRESPONSE BODY, V2",
      lower: "parsehttpresponse body, v2",
    };
    for (const [kind, expected] of Object.entries(cases))
      expect((await output("text.case", { text, case: kind })).text, kind).toBe(expected);
    expect((await output("text.case", { text: "the cat's hat. a DOG ran!", case: "title" })).text).toBe(
      "The Cat's Hat. A Dog Ran!",
    );
    expect((await output("text.case", { text: "the cat's hat. a DOG ran!", case: "sentence" })).text).toBe(
      "The cat's hat. A dog ran!",
    );
  });
});

describe("id.uuid", () => {
  it("makes random version 4 UUIDs, one unless asked for more", async () => {
    const [one] = (await output("id.uuid", {})).uuids;
    expect(one).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const many = (await output("id.uuid", { version: 4, count: 20 })).uuids;
    expect(new Set(many).size).toBe(20);
  });

  it("makes up to 100 time-ordered version 7 UUIDs in ascending order, stamped with the time", async () => {
    const before = Date.now();
    const uuids: string[] = (await output("id.uuid", { version: 7, count: 100 })).uuids;
    expect(uuids).toHaveLength(100);
    expect([...uuids].sort()).toEqual(uuids);
    expect(new Set(uuids).size).toBe(100);
    for (const uuid of uuids)
      expect(uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const stamped = parseInt(uuids[0].replace(/-/g, "").slice(0, 12), 16);
    expect(stamped).toBeGreaterThanOrEqual(before - 1000);
    expect(stamped).toBeLessThanOrEqual(Date.now() + 1000);
  });

  it("refuses 101 at once, a version it does not make, and an input larger than the tool takes", async () => {
    expect((await refused("id.uuid", { count: 101 })).pointer).toBe("/count");
    expect((await refused("id.uuid", { version: 1 })).pointer).toBe("/version");
    const large = await refused("id.uuid", { padding: "x".repeat(2000) });
    expect(large).toMatchObject({ pointer: "", detail: expect.stringMatching(/more than the 1024 id\.uuid takes/) });
  });
});

describe("data.json-format", () => {
  const text = ' { "a" : [1, 2.50, {}, []], "b":12345678901234567890, "s": "x\\"{,}: y", "a": null } ';
  it("pretty-prints with the indent asked for, keeping every number, string and key as written", async () => {
    expect((await output("data.json-format", { text })).text).toBe(
      '{\n  "a": [\n    1,\n    2.50,\n    {},\n    []\n  ],\n  "b": 12345678901234567890,\n  "s": "x\\"{,}: y",\n  "a": null\n}',
    );
    expect((await output("data.json-format", { text: "[1,[2]]", indent: 4 })).text).toBe(
      "[\n    1,\n    [\n        2\n    ]\n]",
    );
  });

  it("minifies", async () => {
    expect((await output("data.json-format", { text, style: "minify" })).text).toBe(
      '{"a":[1,2.50,{},[]],"b":12345678901234567890,"s":"x\\"{,}: y","a":null}',
    );
  });

  it("fails on text that is not JSON, saying where", async () => {
    const failed = await failure("data.json-format", { text: '{"a": 1,}' });
    expect(failed.code).toBe("tools.input.invalid");
    expect(failed.detail).toMatch(/^The text is not JSON: .*position/);
  });
});

describe("data.json-validate", () => {
  const schema = {
    type: "object",
    required: ["name", "age"],
    properties: {
      name: { type: "string", minLength: 1 },
      age: { type: "integer", minimum: 0 },
      mail: { format: "email" },
    },
  };

  it("answers valid, or each fault at a JSON pointer with the keyword that failed", async () => {
    expect(await output("data.json-validate", { schema, document: { name: "Ada", age: 36 } })).toEqual({
      valid: true,
      errors: [],
    });
    const invalid = await output("data.json-validate", { schema, document: { name: "", age: -1, mail: "nope" } });
    expect(invalid.valid).toBe(false);
    expect(invalid.errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ pointer: "/name", keyword: "minLength", schema_path: "#/properties/name/minLength" }),
        expect.objectContaining({ pointer: "/age", keyword: "minimum" }),
        expect.objectContaining({ pointer: "/mail", keyword: "format" }),
      ]),
    );
    expect(await output("data.json-validate", { schema: false, document: 1 })).toMatchObject({ valid: false });
    expect(await output("data.json-validate", { schema: true, document: [null] })).toEqual({ valid: true, errors: [] });
  });

  it("reads the schema's own draft: draft-07's definitions and 2020-12's prefixItems", async () => {
    const draft7 = {
      $schema: "http://json-schema.org/draft-07/schema#",
      definitions: { positive: { type: "number", exclusiveMinimum: 0 } },
      items: { $ref: "#/definitions/positive" },
    };
    expect((await output("data.json-validate", { schema: draft7, document: [1, 2] })).valid).toBe(true);
    expect((await output("data.json-validate", { schema: draft7, document: [1, 0] })).errors[0].pointer).toBe("/1");
    const tuple = { prefixItems: [{ type: "string" }, { type: "number" }], items: false };
    expect((await output("data.json-validate", { schema: tuple, document: ["a", 1] })).valid).toBe(true);
    expect((await output("data.json-validate", { schema: tuple, document: ["a", 1, 2] })).valid).toBe(false);
  });

  it("fails a schema it cannot compile, and never fetches a reference outside it", async () => {
    let fetched = 0;
    const server = createServer((_request, response) => {
      fetched++;
      response.end("{}");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const remote = `http://127.0.0.1:${(server.address() as AddressInfo).port}/schema.json`;
      const failed = await failure("data.json-validate", { schema: { $ref: remote }, document: 1 });
      expect(failed.code).toBe("tools.input.invalid");
      expect(failed.detail).toMatch(/can't resolve reference/);
      expect(fetched).toBe(0);
    } finally {
      server.close();
    }
    expect((await failure("data.json-validate", { schema: { type: "nonsense" }, document: 1 })).code).toBe(
      "tools.input.invalid",
    );
    expect(
      (
        await failure("data.json-validate", {
          schema: { $schema: "http://json-schema.org/draft-03/schema#" },
          document: 1,
        })
      ).detail,
    ).toMatch(/draft-07, 2019-09 and 2020-12/);
  });

  it("ends a schema that would run for minutes at the time budget, and runs the next at once", async () => {
    // Each level tries the next twice: 2^40 steps from a 4 KB schema.
    const $defs: Record<string, unknown> = { d40: { type: "number" } };
    for (let i = 0; i < 40; i++)
      $defs[`d${i}`] = {
        anyOf: [{ allOf: [{ $ref: `#/$defs/d${i + 1}` }, { type: "string" }] }, { $ref: `#/$defs/d${i + 1}` }],
      };
    const started = Date.now();
    const failed = await failure("data.json-validate", { schema: { $ref: "#/$defs/d0", $defs }, document: 1 });
    expect(failed).toEqual({ code: "tools.run.timeout", detail: "The run took longer than its budget of 2 s." });
    expect(Date.now() - started).toBeLessThan(5_000);
    // The service goes on: its event loop was never held, and the next validation gets a fresh worker.
    expect(await output("data.json-validate", { schema, document: { name: "Ada", age: 1 } })).toEqual({
      valid: true,
      errors: [],
    });
  });
});

describe("qr.code", () => {
  it("draws a text as an SVG QR code of the smallest version that holds it, with its margin", async () => {
    const small = await output("qr.code", { text: "hello" });
    expect(small).toMatchObject({ version: 1, size: 21 });
    expect(small.svg).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg" viewBox="0 0 29 29"/);
    const url = await output("qr.code", {
      text: "https://example.org/a/rather/longer/address?with=query",
      error_correction: "H",
      margin: 1,
      dark: "#112233",
    });
    expect(url.version).toBeGreaterThan(1);
    expect(url.size).toBe(17 + 4 * url.version);
    expect(url.svg).toContain(`viewBox="0 0 ${url.size + 2} ${url.size + 2}"`);
    expect(url.svg).toContain('stroke="#112233"');
  });

  it("fails a text too long for a code at the error correction asked for; refuses a bad colour", async () => {
    expect(await failure("qr.code", { text: "x".repeat(2000), error_correction: "H" })).toMatchObject({
      code: "tools.input.invalid",
      detail: expect.stringMatching(/does not fit a QR code/),
    });
    expect((await refused("qr.code", { text: "a", dark: "black" })).pointer).toBe("/dark");
  });
});

describe("the run route, for an inline tool", () => {
  it("refuses a file for a tool that runs inline (400 naming file_name), before it runs", async () => {
    const parts = [
      { name: "input", data: JSON.stringify({ text: "abc" }) },
      { name: "file", filename: "a.txt", type: "text/plain", data: "abc" },
    ];
    const answer = await fetch(`${t.gatewayUrl}/tools/api/v1/tools/text.hash/run`, {
      method: "POST",
      headers: { "content-type": `multipart/form-data; boundary=${BOUNDARY}` },
      body: multipart(parts),
    });
    expect(answer.status).toBe(400);
    expect(await answer.json()).toMatchObject({ code: "request.invalid", field: "file_name" });
  });

  it("answers 404 for a tool without a run API, and for an unknown one", async () => {
    const page = await run("img.color-picker", {});
    expect(page.status).toBe(404);
    expect(page.body).toMatchObject({ code: "tools.tool.not_found", which: "no_api" });
    expect(page.body.detail).toMatch(/has no run API/);
    const unknown = await run("text.nothing", {});
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ code: "tools.tool.not_found", which: "unknown" });
  });
});
