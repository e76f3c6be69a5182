import type { JsonObject } from "@bufbuild/protobuf";
import { createConfig, lintFromString, type Config } from "@redocly/openapi-core";
import { beforeAll, describe, expect, it } from "vitest";
import { bindingsOf } from "../../gateway/bindings.js";
import { openApiDocument, publiclyDocumented } from "../../gateway/openapi.js";
import { modules } from "../../platform/registry.js";

/** Every binding the gateway serves, by the services the platform can run. */
const bindings = modules.flatMap((module) => module.protos).flatMap(bindingsOf);
const keys = [...new Set(bindings.map((binding) => binding.key))];

/** Lints a 1 MB document in seconds on a free core; several run at once on a shared machine. */
const LINT_MS = 240_000;

/**
 * Redocly's recommended rules, as a developer runs them on a document before
 * generating a client, with examples checked against their schemas as errors
 * (the ruleset only warns).
 */
let config: Config;
beforeAll(async () => {
  config = await createConfig({
    extends: ["recommended"],
    rules: { "no-invalid-media-type-examples": "error", "no-invalid-parameter-examples": "error" },
  });
});

async function errorsOf(document: JsonObject): Promise<string[]> {
  const problems = await lintFromString({ source: JSON.stringify(document), absoluteRef: "openapi.json", config });
  return problems
    .filter((problem) => problem.severity === "error")
    .map((problem) => `${problem.ruleId} at ${problem.location[0]?.pointer ?? ""}: ${problem.message}`);
}

/** The documents a service token reads (every route) and everyone else (public and first-party routes), as served. */
const readings = (documented: typeof bindings) => ({
  whole: documented,
  public: documented.filter(publiclyDocumented),
});

describe("the OpenAPI documents pass Redocly's recommended rules with no error", () => {
  it(
    "/openapi.json",
    async () => {
      for (const [reader, documented] of Object.entries(readings(bindings)))
        expect(await errorsOf(openApiDocument(documented, { title: "pf platform" })), reader).toEqual([]);
    },
    LINT_MS,
  );

  it.each(keys)(
    "/%s/openapi.json",
    async (key) => {
      const own = bindings.filter((binding) => binding.key === key);
      for (const [reader, documented] of Object.entries(readings(own))) {
        if (documented.length === 0) continue;
        const document = openApiDocument(documented, { title: `pf ${key}`, basePath: `/${key}` });
        expect(await errorsOf(document), reader).toEqual([]);
      }
    },
    LINT_MS,
  );

  it("a document with an example its schema refuses fails, a body's or an answer's", async () => {
    type Content = { content: Record<string, JsonObject> };
    const document = openApiDocument(
      bindings.filter((binding) => binding.key === "community"),
      { title: "pf community", basePath: "/community" },
    ) as { paths: Record<string, Record<string, { requestBody: Content; responses: Record<string, Content> }>> };
    document.paths["/api/pastes/{slug}/fork"].post.requestBody.content["application/json"].example = { title: 1 };
    document.paths["/api/pastes"].get.responses["200"].content["application/json"].example = { next_cursor: 1 };
    expect(await errorsOf(document as unknown as JsonObject)).toEqual([
      expect.stringMatching(/^no-invalid-media-type-examples at .*pastes\/get\/responses\/200/),
      expect.stringMatching(/^no-invalid-media-type-examples at .*fork/),
    ]);
  });
});
