import { fromJson, type JsonObject } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { applyQuery, queryTargets } from "../../gateway/fields.js";
import { SearchQuerySchema } from "../../gen/pf/search/v1/query_pb.js";
import { problemOf } from "../../services/kit/handler/problem.js";

function fromQuery(query: Record<string, string | string[]>, excluded: string[] = []): JsonObject {
  const json: JsonObject = {};
  applyQuery(json, queryTargets(SearchQuerySchema, new Set(excluded)), query);
  return json;
}

function refusal(run: () => unknown) {
  try {
    run();
  } catch (error) {
    const found = problemOf(error);
    return { status: found.status, code: found.code, field: found.extensions?.field };
  }
  return undefined;
}

describe("map fields in query strings (`facet.<key>=value`)", () => {
  it("sets one key of a map<string, string> per parameter, beside scalar parameters", () => {
    const json = fromQuery({ q: "umbrella", "facet.merchant": "acme", "facet.color": "red" });
    expect(json).toEqual({ q: "umbrella", facet: { merchant: "acme", color: "red" } });
    expect(fromJson(SearchQuerySchema, json).facet).toEqual({ merchant: "acme", color: "red" });
  });

  it("keeps dots and any characters after the map's name in the key", () => {
    expect(fromQuery({ "facet.a.b": "1", "facet.Ünï code": "x" })).toEqual({ facet: { "a.b": "1", "Ünï code": "x" } });
  });

  it("refuses a repeated key, an empty key, the bare map name and a map the route does not take, naming the parameter", () => {
    expect(refusal(() => fromQuery({ "facet.merchant": ["a", "b"] }))).toMatchObject({
      status: 400,
      field: "facet.merchant",
    });
    expect(refusal(() => fromQuery({ "facet.": "x" }))).toMatchObject({ status: 400, field: "facet." });
    expect(refusal(() => fromQuery({ facet: "x" }))).toMatchObject({ status: 400, field: "facet" });
    expect(refusal(() => fromQuery({ "facet.k": "x" }, ["facet"]))).toMatchObject({ status: 400, field: "facet.k" });
    expect(refusal(() => fromQuery({ "nothing.k": "x" }))).toMatchObject({ status: 400, field: "nothing.k" });
  });

  it("lists the map among the query targets by its name and `.*`, never as a plain parameter", () => {
    const names = [...queryTargets(SearchQuerySchema, new Set()).keys()];
    expect(names).toContain("facet.*");
    expect(names).not.toContain("facet");
  });
});
