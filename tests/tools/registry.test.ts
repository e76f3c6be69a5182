import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { ToolsService } from "../../gen/pf/tools/v1/tools_pb.js";
import { Catalogue } from "../../services/tools/catalogue/index.js";
import { usePlatform } from "../support/platform.js";

/**
 * The registry through the gateway, as anyone reads it: anonymous, plain fetch, from any origin. The catalogue
 * is the service's own; the expectations name tools each family's file declares (text.hash, img.process…) and
 * those of catalogue/unlisted.ts (img.color-picker has no API, img.ocr is planned, net.dns-propagation a mirror).
 */
const t = usePlatform({ services: ["tools"] });

const BASE = "/tools/api/v1/tools";
const ANY_ORIGIN = "https://anywhere.example";
const catalogue = new Catalogue();
const available = catalogue.tools.filter((tool) => tool.catalogue === "available");

// Answers are read field by field.
type Json = any;

async function read(path: string, headers: Record<string, string> = {}) {
  const response = await fetch(t.gatewayUrl + path, { headers });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, body: text === "" ? undefined : JSON.parse(text) };
}

/** The ids a list answers, in its order. */
async function listed(query = ""): Promise<string[]> {
  const answer = await read(`${BASE}${query}`);
  expect(answer.status, answer.text).toBe(200);
  return answer.body.tools.map((tool: Json) => tool.id);
}

describe("the tool list", () => {
  it("lists every available tool by id, anonymous, as application/json: planned and mirror tools are not listed", async () => {
    const answer = await read(BASE);
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toMatch(/^application\/json/);
    expect(Object.keys(answer.body)).toEqual(["tools"]);
    const ids = answer.body.tools.map((tool: Json) => tool.id);
    expect(ids).toEqual(available.map((tool) => tool.id).sort());
    expect(ids).toEqual(expect.arrayContaining(["text.hash", "img.process", "audio.process", "img.color-picker"]));
    expect(ids).not.toContain("img.ocr");
    expect(ids).not.toContain("net.dns-propagation");
  });

  it("writes each descriptor in the platform's JSON (snake_case), with its status, its call and its schema link", async () => {
    const { body } = await read(BASE);
    const image = body.tools.find((tool: Json) => tool.id === "img.process");
    expect(image).toMatchObject({
      family: "img",
      execution: "job",
      api: true,
      status: "live",
      call: { method: "POST", path: `${BASE}/img.process/run` },
      schema: `${BASE}/img.process/schema`,
      files: { accept: expect.any(Array), max_count: expect.any(Number), max_bytes: expect.any(Number) },
      limits: { timeout_ms: expect.any(Number), max_input_bytes: expect.any(Number) },
      auth: { capability: "tools.tool.run", anonymous: false },
      quota_class: "file",
      egress: false,
      hosts: [],
    });
    expect(image).not.toHaveProperty("status_reason");
    expect(image).not.toHaveProperty("quotaClass");
    const picker = body.tools.find((tool: Json) => tool.id === "img.color-picker");
    expect(picker).toMatchObject({ api: false, status: "live" });
    expect(picker).not.toHaveProperty("call");
  });

  it("carries the schemas as $refs into each tool's schema route", async () => {
    const { body } = await read(BASE);
    for (const tool of body.tools) {
      expect(tool.input_schema).toEqual({ $ref: `${BASE}/${tool.id}/schema#/$defs/input` });
      expect(tool.output_schema).toEqual({ $ref: `${BASE}/${tool.id}/schema#/$defs/output` });
    }
  });

  it("resolves each $ref to the schemas a single read embeds, for a JSON Schema validator too", async () => {
    const { body } = await read(BASE);
    const entry = (id: string) => body.tools.find((tool: Json) => tool.id === id);
    const ajv = new Ajv({ strict: true, allErrors: true });
    for (const id of ["text.hash", "img.color-picker"]) {
      const single = (await read(`${BASE}/${id}`)).body;
      const [path, pointer] = entry(id).input_schema.$ref.split("#");
      const schema = (await read(path)).body;
      expect(pointer).toBe("/$defs/input");
      expect(schema.$defs.input).toEqual(single.input_schema);
      expect(schema.$defs.output).toEqual(single.output_schema);
      ajv.addSchema(schema);
    }
    // The list's $ref is a schema ajv compiles once the schema document is known by its $id.
    const hashInput = ajv.compile(entry("text.hash").input_schema);
    expect(hashInput({ no: "such member" })).toBe(false);
    const pickerInput = ajv.compile(entry("img.color-picker").input_schema);
    expect(pickerInput({})).toBe(false);
    const pickerOutput = ajv.compile(entry("img.color-picker").output_schema);
    expect(pickerOutput({ hex: "#ff8800", rgb: [255, 136, 0] })).toBe(true);
    expect(pickerOutput({ hex: "orange" })).toBe(false);
  });
});

describe("list filters", () => {
  it("family keeps that family's tools", async () => {
    const ids = await listed("?family=img");
    expect(ids).toEqual(
      available
        .filter((tool) => tool.family === "img")
        .map((tool) => tool.id)
        .sort(),
    );
    expect(ids).toEqual(expect.arrayContaining(["img.process", "img.color-picker"]));
  });

  it("execution keeps the job tools or the inline ones", async () => {
    expect(await listed("?execution=job")).toEqual(["audio.process", "docs.process", "img.process"]);
    const inline = await listed("?execution=inline");
    expect(inline).toEqual(expect.arrayContaining(["text.hash", "img.color-picker"]));
    expect(inline).toHaveLength(available.length - 3);
  });

  it("api keeps the tools the run API exposes, or those it does not", async () => {
    const without = await listed("?api=false");
    expect(without).toEqual(
      available
        .filter((tool) => !tool.api)
        .map((tool) => tool.id)
        .sort(),
    );
    expect(without).toContain("img.color-picker");
    const exposed = await listed("?api=true");
    expect(exposed).toContain("text.hash");
    expect(exposed).not.toContain("img.color-picker");
    expect(exposed.length + without.length).toBe(available.length);
  });

  it("status keeps the live tools or the unavailable ones, each of those saying why", async () => {
    const live = await listed("?status=live");
    expect(live).toEqual(expect.arrayContaining(["text.hash", "img.process", "img.color-picker"]));
    const { body } = await read(`${BASE}?status=unavailable`);
    for (const tool of body.tools) {
      expect(tool.status).toBe("unavailable");
      expect(tool.status_reason).toEqual(expect.any(String));
    }
    expect(live.length + body.tools.length).toBe(available.length);
  });

  it("text keeps the tools whose id, name or summary holds every word, in any case", async () => {
    expect(await listed("?text=HASH")).toContain("text.hash");
    for (const id of await listed("?text=image")) {
      const tool = catalogue.available(id);
      expect(`${tool.id} ${tool.name} ${tool.summary}`.toLowerCase()).toContain("image");
    }
    // One word in the name, one in the summary.
    expect(await listed(`?text=${encodeURIComponent("Colour  browser")}`)).toEqual(["img.color-picker"]);
    expect(await listed("?text=colour+nothing-holds-this")).toEqual([]);
  });

  it("combines filters: each must hold", async () => {
    expect(await listed("?family=img&execution=job")).toEqual(["img.process"]);
    expect(await listed("?family=img&api=false&status=live&text=picks")).toEqual(["img.color-picker"]);
    expect(await listed("?family=text&execution=job")).toEqual([]);
    // The mirror is not listed under its family either.
    expect(await listed("?family=net&text=propagation")).toEqual([]);
  });

  it.each([
    ["family", "nope"],
    ["family", "IMG"],
    ["execution", "batch"],
    ["api", "yes"],
    ["status", "planned"],
  ])("a bad %s value (%s) is 400 tools.query.invalid naming the filter", async (field, value) => {
    const answer = await read(`${BASE}?${field}=${value}`);
    expect(answer.status).toBe(400);
    expect(answer.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(answer.body).toMatchObject({ code: "tools.query.invalid", field });
    expect(answer.body.detail).toContain(field);
    const families = [...new Set(catalogue.tools.map((tool) => tool.family))].sort();
    const takes = {
      family: families,
      execution: ["inline", "job"],
      api: ["true", "false"],
      status: ["live", "unavailable"],
    };
    expect(answer.body.allowed).toEqual(takes[field as keyof typeof takes]);
  });

  it("a bad value is refused even beside good ones", async () => {
    const answer = await read(`${BASE}?family=img&status=broken`);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({
      code: "tools.query.invalid",
      field: "status",
      allowed: ["live", "unavailable"],
    });
  });
});

describe("a tool's read and its schema", () => {
  it("embeds the schemas in a single read, as the catalogue declares them", async () => {
    const answer = await read(`${BASE}/text.hash`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toMatch(/^application\/json/);
    const hash = catalogue.available("text.hash");
    expect(answer.body).toMatchObject({
      id: "text.hash",
      name: hash.name,
      summary: hash.summary,
      status: "live",
      call: { method: "POST", path: `${BASE}/text.hash/run` },
      schema: `${BASE}/text.hash/schema`,
      auth: { capability: "tools.tool.run", anonymous: true },
      quota_class: "light",
      cost: hash.cost,
    });
    expect(answer.body.input_schema).toEqual(hash.input);
    expect(answer.body.output_schema).toEqual(hash.output);
  });

  it("embeds false as the input schema of a tool without an API", async () => {
    const { body } = await read(`${BASE}/img.color-picker`);
    expect(body.input_schema).toBe(false);
    expect(body.output_schema).toMatchObject({ type: "object" });
  });

  it("answers a schema document: $schema, its own path as $id, $defs.input and $defs.output", async () => {
    const answer = await read(`${BASE}/text.hash/schema`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toMatch(/^application\/json/);
    const hash = catalogue.available("text.hash");
    expect(answer.body).toEqual({
      $schema: "http://json-schema.org/draft-07/schema#",
      $id: `${BASE}/text.hash/schema`,
      $defs: { input: hash.input, output: hash.output },
    });
  });

  it("answers $defs.input false for a tool without an API", async () => {
    const { body } = await read(`${BASE}/img.color-picker/schema`);
    expect(body.$id).toBe(`${BASE}/img.color-picker/schema`);
    expect(body.$defs.input).toBe(false);
    expect(body.$defs.output).toMatchObject({ type: "object", required: ["hex", "rgb"] });
  });

  it("answers an RPC caller the same document as bytes", async () => {
    const over = await t.client(ToolsService).getTool({ id: "text.hash" });
    expect(over.body?.contentType).toBe("application/json");
    expect(new TextDecoder().decode(over.body?.data)).toBe((await read(`${BASE}/text.hash`)).text);
  });

  it.each([
    ["no.such-tool", "unknown"],
    ["img.ocr", "planned"],
    ["net.dns-propagation", "mirror"],
  ])("%s is 404 tools.tool.not_found (%s) on its read and its schema", async (id, which) => {
    for (const path of [`${BASE}/${id}`, `${BASE}/${id}/schema`]) {
      const answer = await read(path);
      expect(answer.status, path).toBe(404);
      expect(answer.body).toMatchObject({ code: "tools.tool.not_found", tool: id, which });
      expect(answer.body.detail).toContain(which === "unknown" ? "No tool" : which);
    }
  });
});

describe("caching", () => {
  it.each([
    ["the list", BASE],
    ["a filtered list", `${BASE}?family=img&text=image`],
    ["a tool", `${BASE}/text.hash`],
    ["a schema", `${BASE}/text.hash/schema`],
  ])("answers %s with a strong ETag, the same each time, and 304 to If-None-Match", async (_name, path) => {
    const first = await read(path);
    const etag = first.headers.get("etag");
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(first.headers.get("cache-control")).toBe("public, max-age=300");
    expect((await read(path)).headers.get("etag")).toBe(etag);
    const again = await read(path, { "if-none-match": etag! });
    expect(again.status).toBe(304);
    expect(again.text).toBe("");
    expect(again.headers.get("etag")).toBe(etag);
    const stale = await read(path, { "if-none-match": '"stale"' });
    expect(stale.status).toBe(200);
    expect(stale.text).toBe(first.text);
  });

  it("gives each document its own ETag", async () => {
    const paths = [BASE, `${BASE}?family=img`, `${BASE}/text.hash`, `${BASE}/text.hash/schema`, `${BASE}/img.process`];
    const etags = await Promise.all(paths.map(async (path) => (await read(path)).headers.get("etag")));
    expect(new Set(etags).size).toBe(paths.length);
  });
});

describe("CORS", () => {
  const allowed = (response: { headers: Headers }) => response.headers.get("access-control-allow-origin");
  const preflight = (path: string, method: string) =>
    fetch(t.gatewayUrl + path, {
      method: "OPTIONS",
      headers: { origin: ANY_ORIGIN, "access-control-request-method": method },
    });

  it.each([BASE, `${BASE}/text.hash`, `${BASE}/text.hash/schema`])(
    "answers any origin with * on %s, its preflight too, and lets it read the ETag",
    async (path) => {
      const answer = await read(path, { origin: ANY_ORIGIN });
      expect(answer.status).toBe(200);
      expect(allowed(answer)).toBe("*");
      expect(answer.headers.get("access-control-expose-headers")).toContain("ETag");
      const asked = await preflight(path, "GET");
      expect(asked.status).toBe(204);
      expect(allowed(asked)).toBe("*");
    },
  );

  it("answers no other origin on the run and jobs routes", async () => {
    const job = await read("/tools/api/v1/jobs/job_000000000000000000000000", { origin: ANY_ORIGIN });
    expect(allowed(job)).toBeNull();
    expect(allowed(await preflight("/tools/api/v1/jobs/job_000000000000000000000000", "GET"))).toBeNull();
    expect(allowed(await preflight("/tools/api/v1/jobs", "POST"))).toBeNull();
    expect(allowed(await preflight(`${BASE}/text.hash/run`, "POST"))).toBeNull();
  });
});
