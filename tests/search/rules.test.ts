import { ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { DocumentWriteRequestSchema, DocumentWriteSchema } from "../../gen/pf/search/v1/documents_pb.js";
import { SearchQuerySchema } from "../../gen/pf/search/v1/query_pb.js";
import { SearchIndexService } from "../../gen/pf/search/v1/search_pb.js";
import { ProblemSchema } from "../../gen/pf/v1/problem_pb.js";
import type { DescField } from "@bufbuild/protobuf";
import { fieldRulesOf, patternOf } from "../../services/kit/rpc/field-rules.js";
import { ID, ID_MAX, TYPE } from "../../services/search/domain/documents.js";
import { TAG } from "../../services/search/domain/languages.js";
import type { HttpAnswer } from "../support/platform.js";
import { usePlatform } from "../support/platform.js";
import { doc, freshId, ownerToken, query } from "./support.js";

const t = usePlatform({ services: ["search"] });

/** The fields a 400 request.invalid lists in `errors`, in order. */
function faultFields(answer: HttpAnswer): string[] {
  expect(answer.body, JSON.stringify(answer.body)).toMatchObject({ status: 400, code: "request.invalid" });
  return (answer.body.errors as { field: string }[]).map((fault) => fault.field);
}

/** The string rules declared on a field. */
function stringRules(field: DescField) {
  const rules = fieldRulesOf(field);
  return rules?.type.case === "string" ? rules.type.value : undefined;
}

describe("search's input rules, declared in the contract", () => {
  it("report every rule a request breaks, each naming its field", async () => {
    const search = await query(t, "lang=not_a_tag&limit=201&owner=Not%20A%20Slug&type=Bad!");
    expect(search.body.field).toBe("lang");
    expect(faultFields(search)).toEqual(["lang", "limit", "owner", "type"]);
    const suggest = await t.http("GET", "/search/api/v1/suggest?q=x&limit=0&lang=x");
    expect(faultFields(suggest)).toEqual(["lang", "limit"]);
    expect(faultFields(await t.http("GET", "/search/api/v1/documents/Tips/Page/p1?limit=0"))).toEqual([
      "limit",
      "owner",
      "type",
    ]);

    const token = await ownerToken(t, "tips");
    const put = await t.http("PUT", "/search/api/v1/documents/tips/page/bad%20id", { token, body: { revision: "0" } });
    expect(faultFields(put)).toEqual(["id", "revision", "document"]);
    const inventory = await t.http("GET", "/search/api/v1/owners/tips/documents?type=Page&limit=0", { token });
    expect(faultFields(inventory)).toEqual(["type", "limit"]);
  });

  it("hold q to 1000 characters as sent and facets to 10 keys, on every query route", async () => {
    const facets = Array.from({ length: 11 }, (_, n) => `k${n}`).join(",");
    const long = "a".repeat(1001);
    expect(faultFields(await query(t, `q=${long}&facets=${facets}`))).toEqual(["q", "facets"]);
    expect(faultFields(await t.http("GET", `/search/api/v1/suggest?q=${long}&facets=a,,b`))).toEqual(["q", "facets"]);
    const read = await t.http("GET", `/search/api/v1/documents/tips/page/bad%20id?q=${long}&facets=Bad!`);
    expect(faultFields(read)).toEqual(["q", "facets", "id"]);

    // Ten keys, spaces around them, and a q of 1000 characters are taken.
    const ten = encodeURIComponent(Array.from({ length: 10 }, (_, n) => ` k${n} `).join(","));
    expect((await query(t, `q=${"a".repeat(1000)}&facets=${ten}`)).status).toBe(200);
  });

  it("take document ids of up to 200 characters on every route, the batch included", async () => {
    const token = await ownerToken(t, "tips");
    const id = freshId().padEnd(ID_MAX, "x");
    const put = await t.http("PUT", `/search/api/v1/documents/tips/page/${id}`, {
      token,
      body: { revision: "1", document: doc() },
    });
    expect(put.body).toMatchObject({ write: { id, outcome: "WRITE_OUTCOME_APPLIED" } });
    expect((await t.http("GET", `/search/api/v1/documents/tips/page/${id}`)).body).toMatchObject({ document: { id } });
    const held = await t.http("GET", `/search/api/v1/owners/tips/documents/page/${id}`, { token });
    expect(held.body).toMatchObject({ document: { id } });

    const over = `${id}x`;
    const refused = await t.http("PUT", `/search/api/v1/documents/tips/page/${over}`, {
      token,
      body: { revision: "1", document: doc() },
    });
    expect(refused.body.errors).toEqual([expect.objectContaining({ field: "id", rule: "string.max_len" })]);
    expect(faultFields(await t.http("GET", `/search/api/v1/documents/tips/page/${over}`))).toEqual(["id"]);

    const index = t.client(SearchIndexService, token);
    const batchId = freshId("b").padEnd(ID_MAX, "x");
    const answer = await index.writeDocuments({
      writes: [{ type: "page", id: batchId, revision: 1n, document: doc() }],
    });
    expect(answer.results.map((result) => [result.id, result.code])).toEqual([[batchId, ""]]);
    const whole = await index
      .writeDocuments({ writes: [{ type: "page", id: `${batchId}x`, revision: 1n, deleted: true }] })
      .then(
        () => undefined,
        (error: unknown) => ConnectError.from(error).findDetails(ProblemSchema)[0],
      );
    expect(whole).toMatchObject({ status: 400, code: "request.invalid", extensions: { field: "writes[0].id" } });
  });

  it("hold addresses and languages to the shapes documents are checked against", () => {
    expect(stringRules(SearchQuerySchema.field.type)?.pattern).toBe(TYPE.source);
    expect(stringRules(DocumentWriteRequestSchema.field.type)?.pattern).toBe(TYPE.source);
    for (const field of [DocumentWriteRequestSchema.field.id, SearchQuerySchema.field.id])
      expect(stringRules(field)).toMatchObject({ pattern: ID.source, maxLen: BigInt(ID_MAX) });
    expect(stringRules(DocumentWriteSchema.field.id)).toMatchObject({ maxLen: BigInt(ID_MAX) });
    expect(stringRules(SearchQuerySchema.field.lang)?.pattern).toBe(TAG.source);
    const facets = patternOf(stringRules(SearchQuerySchema.field.facets)!.pattern!);
    for (const taken of ["a", "a,b", " a , b ", `${"k".repeat(64)},x_y-z`])
      expect(facets.test(taken), taken).toBe(true);
    for (const refused of ["A", "a,", ",a", "a,,b", "a;b", "k".repeat(65), "a,b,c,d,e,f,g,h,i,j,k"])
      expect(facets.test(refused), refused).toBe(false);
  });
});
