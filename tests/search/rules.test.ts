import { describe, expect, it } from "vitest";
import { DocumentWriteRequestSchema } from "../../gen/pf/search/v1/documents_pb.js";
import { SearchQuerySchema } from "../../gen/pf/search/v1/query_pb.js";
import type { DescField } from "@bufbuild/protobuf";
import { fieldRulesOf } from "../../services/kit/rpc/field-rules.js";
import { ID, TYPE } from "../../services/search/domain/documents.js";
import { TAG } from "../../services/search/domain/languages.js";
import type { HttpAnswer } from "../support/platform.js";
import { usePlatform } from "../support/platform.js";
import { doc, ownerToken, query } from "./support.js";

const t = usePlatform({ services: ["search"] });

/** The fields a 400 request.invalid lists in `errors`, in order. */
function faultFields(answer: HttpAnswer): string[] {
  expect(answer.body, JSON.stringify(answer.body)).toMatchObject({ status: 400, code: "request.invalid" });
  return (answer.body.errors as { field: string }[]).map((fault) => fault.field);
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
    const put = await t.http("PUT", "/search/api/v1/documents/tips/page/bad%20id", {
      token,
      body: { revision: "0", document: doc() },
    });
    expect(faultFields(put)).toEqual(["id", "revision"]);
    const inventory = await t.http("GET", "/search/api/v1/owners/tips/documents?type=Page&limit=0", { token });
    expect(faultFields(inventory)).toEqual(["type", "limit"]);
  });

  it("hold addresses and languages to the shapes documents are checked against", () => {
    const pattern = (field: DescField) => {
      const rules = fieldRulesOf(field);
      return rules?.type.case === "string" ? rules.type.value.pattern : undefined;
    };
    expect(pattern(SearchQuerySchema.field.type)).toBe(TYPE.source);
    expect(pattern(DocumentWriteRequestSchema.field.type)).toBe(TYPE.source);
    expect(pattern(DocumentWriteRequestSchema.field.id)).toBe(ID.source);
    expect(pattern(SearchQuerySchema.field.lang)).toBe(TAG.source);
  });
});
