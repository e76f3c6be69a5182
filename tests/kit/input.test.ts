import { describe, expect, it } from "vitest";
import { unstorable } from "../../services/kit/rpc/input.js";

describe("unstorable input", () => {
  it("names the field holding a NUL, a lone surrogate or a number that is not finite", () => {
    expect(unstorable({ $typeName: "x", reason: "ok", idempotencyKey: "a\u0000b" }, "")).toBe("idempotency_key");
    expect(unstorable({ record: { nested: ["fine", "\ud800"] } }, "")).toBe("record.nested[1]");
    expect(unstorable({ record: { a: Number.POSITIVE_INFINITY } }, "")).toBe("record.a");
    expect(unstorable({ $typeName: "x", queries: [{ $typeName: "y", localId: "1" }, { $typeName: "y", localId: "\u0000" }] }, "")).toBe("queries[1].local_id");
    // JSON inside a message (a Struct) keeps its keys as given, and its keys are checked too.
    expect(unstorable({ $typeName: "x", record: { someKey: "\u0000" } }, "")).toBe("record.someKey");
    expect(unstorable({ $typeName: "x", record: { "\ud800": 1 } }, "")).toBe("record.\ud800");
  });

  it("passes ordinary text, emoji, bytes and 64-bit integers", () => {
    expect(unstorable({ title: "Grüße 👋", amount: 5n, data: new Uint8Array([0]), ratio: 0.5, none: null }, "")).toBeUndefined();
  });
});
