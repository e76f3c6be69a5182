import { create, fromJson, type DescMethod, type JsonObject } from "@bufbuild/protobuf";
import { WireType } from "@bufbuild/protobuf/wire";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { connect as connectHttp2 } from "node:http2";
import { describe, expect, it } from "vitest";
import { BillingAdminService } from "../../gen/pf/billing/v1/admin_pb.js";
import { BillingService } from "../../gen/pf/billing/v1/billing_pb.js";
import { GetBalanceRequestSchema } from "../../gen/pf/billing/v1/ledger_pb.js";
import { CouponsService } from "../../gen/pf/coupons/v1/coupons_pb.js";
import { DealsService } from "../../gen/pf/deals/v1/deals_pb.js";
import { NetworkService } from "../../gen/pf/network/v1/network_pb.js";
import { SearchService } from "../../gen/pf/search/v1/search_pb.js";
import { ProblemSchema } from "../../gen/pf/v1/problem_pb.js";
import { VipService } from "../../gen/pf/vip/v1/vip_pb.js";
import {
  checkInput,
  idRuleOf,
  inputFaults,
  routeFieldsOf,
  unknownFields,
  unstorable,
} from "../../services/kit/rpc/input.js";
import { usePlatform } from "../support/platform.js";

describe("unstorable input", () => {
  it("names each field holding a NUL, a lone surrogate or a number that is not finite", () => {
    expect(unstorable({ $typeName: "x", reason: "ok", idempotencyKey: "a\u0000b" }, "")).toEqual(["idempotency_key"]);
    expect(unstorable({ record: { nested: ["fine", "\ud800"] } }, "")).toEqual(["record.nested[1]"]);
    expect(unstorable({ record: { a: Number.POSITIVE_INFINITY } }, "")).toEqual(["record.a"]);
    expect(unstorable({ $typeName: "x", title: "\u0000", tags: ["ok", "\udc00", "\u0000"] }, "")).toEqual([
      "title",
      "tags[1]",
      "tags[2]",
    ]);
    expect(
      unstorable(
        {
          $typeName: "x",
          queries: [
            { $typeName: "y", localId: "1" },
            { $typeName: "y", localId: "\u0000" },
          ],
        },
        "",
      ),
    ).toEqual(["queries[1].local_id"]);
    // JSON inside a message (a Struct) keeps its keys as given, and its keys are checked too.
    expect(unstorable({ $typeName: "x", record: { someKey: "\u0000" } }, "")).toEqual(["record.someKey"]);
    expect(unstorable({ $typeName: "x", record: { "\ud800": 1 } }, "")).toEqual(["record.\ud800"]);
  });

  it("passes ordinary text, emoji, bytes and 64-bit integers", () => {
    expect(
      unstorable({ title: "Grüße 👋", amount: 5n, data: new Uint8Array([0]), ratio: 0.5, none: null }, ""),
    ).toEqual([]);
  });
});

describe("fields the contract does not name", () => {
  it("are found wherever a binary caller put them", () => {
    const unknown = [{ no: 9, wireType: 0, data: new Uint8Array([1]) }];
    expect(unknownFields({ $typeName: "x", subject: "usr_a", $unknown: unknown }, "")).toEqual(["#9"]);
    expect(
      unknownFields({ $typeName: "x", amount: { $typeName: "m", currency: "USD", $unknown: unknown } }, ""),
    ).toEqual(["amount.#9"]);
    expect(
      unknownFields({ $typeName: "x", lines: [{ $typeName: "l" }, { $typeName: "l", $unknown: unknown }] }, ""),
    ).toEqual(["lines[1].#9"]);
    expect(unknownFields({ $typeName: "x", subject: "usr_a", $unknown: [] }, "")).toEqual([]);
  });
});

/** The field the input guard names refusing a request (given as proto JSON), or undefined when it takes it. */
function refusedField(method: DescMethod, json: JsonObject): string | undefined {
  try {
    checkInput(method, fromJson(method.input, json));
    return undefined;
  } catch (error) {
    const [problem] = ConnectError.from(error).findDetails(ProblemSchema);
    expect(problem).toMatchObject({ status: 400, code: "request.invalid" });
    return problem.extensions?.field as string;
  }
}

/**
 * The fields of every fault the input guard finds in a request (given as proto JSON). Requests here carry only the
 * fields at hand: other rules of their contracts may find more.
 */
function faultFields(method: DescMethod, json: JsonObject): string[] {
  return inputFaults(method, fromJson(method.input, json)).map((fault) => fault.field);
}

describe("ids in a request", () => {
  const { getPlan, updatePlan, createPerk } = VipService.method;
  const made = "pln_01jd7x3k9m2q4r6s8t0v1w3y5z";

  it("with an id_prefix: the prefix, `_` and 1 to 64 lowercase letters or digits, or 400 naming the field", () => {
    for (const id of [made, "pln_1", `pln_${"a".repeat(64)}`])
      expect(refusedField(getPlan, { id }), id).toBeUndefined();
    for (const id of [
      "pln_",
      `pln_${"a".repeat(65)}`,
      "prk_01jd",
      "pln_01JD",
      "pln-01jd",
      "pln_01jd\u00e9",
      "x".repeat(1e6),
    ])
      expect(refusedField(getPlan, { id }), id.slice(0, 20)).toBe("id");
  });

  it("nested and repeated ones are named where they were sent", () => {
    expect(faultFields(updatePlan, { id: made, perks: { perk_ids: ["prk_1", "bad"] } })).toContain("perks.perk_ids[1]");
    expect(
      faultFields(BillingService.method.createIntent, {
        channel_subscription: { streamer: "usr_a", plan_id: "nope" },
      }),
    ).toContain("channel_subscription.plan_id");
    const ref = (id: string) => ({ product_bindings: [{ service: "deals", kind: "offer", id }] });
    expect(faultFields(createPerk, ref("x".repeat(128)))).not.toContain("product_bindings[0].id");
    expect(faultFields(createPerk, ref("x".repeat(129)))).toContain("product_bindings[0].id");
  });

  it("without one, an `id`, `…_id` or `…_ids` field (ids others make) holds at most 128 characters", () => {
    const { creditCoins } = NetworkService.method;
    expect(faultFields(creditCoins, { app_id: "a".repeat(128) })).not.toContain("app_id");
    expect(faultFields(creditCoins, { app_id: "a".repeat(129) })).toContain("app_id");
    expect(idRuleOf(creditCoins.input.field.idempotencyKey)).toBeUndefined();
    expect(idRuleOf(getPlan.input.field.id)).toMatchObject({ prefix: "pln", maxLength: 68 });
  });

  it("one whose rules declare a max_len holds that many instead (search's document ids: 200)", () => {
    const { deleteDocument } = SearchService.method;
    const faults = (id: string) =>
      inputFaults(deleteDocument, fromJson(deleteDocument.input, { owner: "tips", type: "page", id, revision: "1" }));
    expect(idRuleOf(deleteDocument.input.field.id)).toBeUndefined();
    expect(faults("a".repeat(200))).toEqual([]);
    expect(faults("a".repeat(201))).toEqual([expect.objectContaining({ field: "id", rule: "string.max_len" })]);
  });

  it('an optional id cleared with "" is no id', () => {
    expect(faultFields(DealsService.method.updateOffer, { id: "off_1", product_id: "" })).not.toContain("product_id");
  });
});

describe("a request schema several routes share", () => {
  const { updateMerchantStatus, updateMerchantDomains, createMerchant, getCoupon } = CouponsService.method;

  it("refuses a field of another route, naming it (400)", () => {
    const rule = { domain: "shop.example" };
    expect(faultFields(updateMerchantStatus, { id: "mer_1", status: "MERCHANT_STATUS_APPROVED" })).toEqual([]);
    expect(faultFields(updateMerchantStatus, { id: "mer_1", domains: [rule] })).toContain("domains");
    expect(faultFields(updateMerchantDomains, { id: "mer_1", domains: [rule] })).toEqual([]);
    expect(faultFields(updateMerchantDomains, { id: "mer_1", status: "MERCHANT_STATUS_DISABLED" })).toContain("status");
    expect(faultFields(createMerchant, { host: "shop.example", id: "mer_1" })).toContain("id");
    expect(faultFields(BillingService.method.createIntent, { id: "pi_1", subject: "usr_a" })).toContain("id");
  });

  it("a route that reads no field refuses every one; a route whose schema is its own reads all", () => {
    expect(routeFieldsOf(BillingAdminService.method.getFreeze)).toEqual(new Set());
    expect(refusedField(BillingAdminService.method.getFreeze, { status: "held" })).toBe("status");
    expect(refusedField(BillingAdminService.method.getFreeze, {})).toBeUndefined();
    expect(routeFieldsOf(getCoupon)).toBeUndefined();
  });
});

describe("a direct RPC caller sending a field the contract does not name", () => {
  const t = usePlatform({ services: ["billing"] });

  it("is refused over gRPC (protobuf keeps unknown fields), never silently dropped", async () => {
    const token = await t.token({ kind: "service", svc: "tips", caps: ["billing.balance.read"] });
    const grpc = createClient(BillingService, createGrpcTransport({ baseUrl: t.platform.rpcUrl }));
    const headers = { authorization: `Bearer ${token}` };
    const request = create(GetBalanceRequestSchema, { subject: "usr_a1" });
    request.$unknown = [{ no: 9, wireType: WireType.Varint, data: new Uint8Array([1]) }];
    await expect(grpc.getBalance(request, { headers })).rejects.toMatchObject({ code: Code.InvalidArgument });
    await expect(grpc.getBalance({ subject: "usr_a1" }, { headers })).resolves.toMatchObject({ subject: "usr_a1" });
  });

  it("is refused over Connect JSON on the RPC port", async () => {
    const token = await t.token({ kind: "service", svc: "tips", caps: ["billing.balance.read"] });
    const call = (body: unknown) =>
      postJson(t.platform.rpcUrl, "/pf.billing.v1.BillingService/GetBalance", token, body);
    expect((await call({ subject: "usr_a1" })).status).toBe(200);
    const refused = await call({ subject: "usr_a1", weight: 2 });
    expect(refused.status).toBe(400);
    expect(refused.body).toContain("weight");
  });
});

/** A Connect unary call with a JSON body over HTTP/2 cleartext. */
function postJson(url: string, path: string, token: string, body: unknown): Promise<{ status: number; body: string }> {
  const session = connectHttp2(url);
  return new Promise((resolve, reject) => {
    const request = session.request({
      ":method": "POST",
      ":path": path,
      "content-type": "application/json",
      authorization: `Bearer ${token}`,
    });
    let status = 0;
    let text = "";
    request.on("response", (headers) => (status = Number(headers[":status"])));
    request.on("data", (chunk: Buffer) => (text += chunk.toString()));
    request.on("end", () => {
      session.close();
      resolve({ status, body: text });
    });
    request.on("error", reject);
    request.end(JSON.stringify(body));
  });
}
