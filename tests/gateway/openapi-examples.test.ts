import type { JsonObject } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { exampleOf } from "../../gateway/openapi-examples.js";
import { patternSample } from "../../gateway/pattern-sample.js";
import { SchemaComponents } from "../../gateway/schemas.js";
import { AuthorshipSchema } from "../../gen/pf/v1/authorship_pb.js";

describe("patternSample: the shortest string a pattern matches", () => {
  it.each([
    ["^pln_[0-9a-z]{1,64}$", "pln_0"],
    ["^-?[0-9]+(\\.[0-9]+)?s$", "0s"],
    ["^[A-Z]{3}$", "AAA"],
    ["^(?:https?)://[a-z]+\\.example$", "http://a.example"],
    ["^#[0-9a-fA-F]{6}$", "#000000"],
    ["^[^\\s@]+@[^\\s@]+$", "a@a"],
    ["^\\d{4}-\\d{2}$", "0000-00"],
    ["^(draft|published)$", "draft"],
    ["^[a-z][a-z0-9-]{2,}$", "aaa"],
  ])("%s: %s", (pattern, sample) => {
    expect(patternSample(pattern)).toBe(sample);
  });

  it("gives none for what it does not sample (lookarounds, backreferences) or a pattern that is not one", () => {
    for (const pattern of ["^(?=a)a$", "^(a)\\1$", "^[a-z", "(", "^a{2}$a"])
      expect(patternSample(pattern), pattern).toBeUndefined();
  });
});

describe("exampleOf: a value valid against a schema", () => {
  const of = (schema: JsonObject, components: Record<string, JsonObject> = {}) => exampleOf(schema, components);

  it("takes the schema's own example, const or default first", () => {
    expect(of({ type: "string", example: "given" })).toBe("given");
    expect(of({ type: "string", examples: ["first", "second"] })).toBe("first");
    expect(of({ const: 3 })).toBe(3);
    expect(of({ type: "integer", default: 50 })).toBe(50);
  });

  it("keeps strings within their format, pattern and lengths", () => {
    expect(of({ type: "string" })).toBe("example");
    expect(of({ type: "string", minLength: 10 })).toBe("examplexxx");
    expect(of({ type: "string", maxLength: 3 })).toBe("exa");
    expect(of({ type: "string", format: "date-time" })).toBe("2030-01-01T00:00:00Z");
    expect(of({ type: "string", format: "uri" })).toBe("https://example.com/");
    expect(of({ type: "string", pattern: "^pln_[0-9a-z]{1,64}$", maxLength: 68 })).toBe("pln_0");
    expect(of({ type: "string", pattern: "^pln_[0-9a-z]{1,64}$", maxLength: 3 })).toBeUndefined();
    expect(of({ type: "string", contentEncoding: "base64", minLength: 1 })).toBe("AAAA");
  });

  it("takes an enum's first value that is not the unspecified one", () => {
    expect(of({ type: "string", enum: ["KIND_UNSPECIFIED", "KIND_ALERTS", "KIND_GOALS"] })).toBe("KIND_ALERTS");
    expect(of({ type: "string", enum: ["KIND_UNSPECIFIED"] })).toBe("KIND_UNSPECIFIED");
  });

  it("keeps numbers within their bounds, and 64-bit integers as proto JSON's strings", () => {
    expect(of({ type: "integer" })).toBe(0);
    expect(of({ type: "integer", minimum: 1, maximum: 200 })).toBe(1);
    expect(of({ type: "integer", exclusiveMinimum: 0 })).toBe(1);
    expect(of({ type: "integer", maximum: -5 })).toBe(-5);
    expect(of({ type: "integer", minimum: 7, multipleOf: 5 })).toBe(10);
    expect(of({ type: "number", exclusiveMinimum: 0.5 })).toBe(1.5);
    expect(of({ type: ["string", "integer"], format: "int64", minimum: 1 })).toBe("1");
    expect(of({ type: "boolean" })).toBe(false);
  });

  it("gives a list its least items (at least one) and a map none", () => {
    expect(of({ type: "array", items: { type: "string" } })).toEqual(["example"]);
    expect(of({ type: "array", items: { type: "integer" }, minItems: 2 })).toEqual([0, 0]);
    expect(of({ type: "array", items: { type: "integer" }, maxItems: 0 })).toEqual([]);
    expect(of({ type: "object", additionalProperties: { type: "string" } })).toEqual({});
  });

  it("fills a message's fields through its component, one member per oneof: the required one, else the first", () => {
    const components = new SchemaComponents();
    const ref = components.message(AuthorshipSchema);
    expect(exampleOf(ref, components.schemas, AuthorshipSchema)).toEqual({ person: "example" });
    const schema = { ...components.schemas["pf.v1.Authorship"], required: ["system"] };
    expect(exampleOf(schema, components.schemas, AuthorshipSchema)).toEqual({ system: { service: "example" } });
  });

  it("stops where a message holds itself", () => {
    const components = {
      node: { type: "object", properties: { name: { type: "string" }, child: { $ref: "#/components/schemas/node" } } },
    };
    expect(of({ $ref: "#/components/schemas/node" }, components)).toEqual({ name: "example" });
  });
});
