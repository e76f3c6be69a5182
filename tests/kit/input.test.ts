import { create } from "@bufbuild/protobuf";
import { WireType } from "@bufbuild/protobuf/wire";
import { Code, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { connect as connectHttp2 } from "node:http2";
import { describe, expect, it } from "vitest";
import { BillingService } from "../../gen/pf/billing/v1/billing_pb.js";
import { GetBalanceRequestSchema } from "../../gen/pf/billing/v1/ledger_pb.js";
import { unknownField, unstorable } from "../../services/kit/rpc/input.js";
import { usePlatform } from "../support/platform.js";

describe("unstorable input", () => {
  it("names the field holding a NUL, a lone surrogate or a number that is not finite", () => {
    expect(unstorable({ $typeName: "x", reason: "ok", idempotencyKey: "a\u0000b" }, "")).toBe("idempotency_key");
    expect(unstorable({ record: { nested: ["fine", "\ud800"] } }, "")).toBe("record.nested[1]");
    expect(unstorable({ record: { a: Number.POSITIVE_INFINITY } }, "")).toBe("record.a");
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
    ).toBe("queries[1].local_id");
    // JSON inside a message (a Struct) keeps its keys as given, and its keys are checked too.
    expect(unstorable({ $typeName: "x", record: { someKey: "\u0000" } }, "")).toBe("record.someKey");
    expect(unstorable({ $typeName: "x", record: { "\ud800": 1 } }, "")).toBe("record.\ud800");
  });

  it("passes ordinary text, emoji, bytes and 64-bit integers", () => {
    expect(
      unstorable({ title: "Grüße 👋", amount: 5n, data: new Uint8Array([0]), ratio: 0.5, none: null }, ""),
    ).toBeUndefined();
  });
});

describe("fields the contract does not name", () => {
  it("are found wherever a binary caller put them", () => {
    const unknown = [{ no: 9, wireType: 0, data: new Uint8Array([1]) }];
    expect(unknownField({ $typeName: "x", subject: "usr_a", $unknown: unknown }, "")).toBe("#9");
    expect(unknownField({ $typeName: "x", amount: { $typeName: "m", currency: "USD", $unknown: unknown } }, "")).toBe(
      "amount.#9",
    );
    expect(
      unknownField({ $typeName: "x", lines: [{ $typeName: "l" }, { $typeName: "l", $unknown: unknown }] }, ""),
    ).toBe("lines[1].#9");
    expect(unknownField({ $typeName: "x", subject: "usr_a", $unknown: [] }, "")).toBeUndefined();
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
