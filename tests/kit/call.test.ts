import { createContextValues, type UnaryRequest } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { callScope, currentRequestId, propagateRequestId } from "../../services/kit/call.js";

const request = (headers: Record<string, string> = {}) =>
  ({ header: new Headers(headers), signal: new AbortController().signal, contextValues: createContextValues() }) as unknown as UnaryRequest;

describe("request ids", () => {
  it("cross from a served call into the calls it makes", async () => {
    const outgoing = propagateRequestId()(async (req) => req.header.get("x-request-id") as never);
    const served = callScope()(async () => ({ seen: currentRequestId(), forwarded: await outgoing(request()) }) as never);
    expect(await served(request({ "x-request-id": "req-42" }))).toEqual({ seen: "req-42", forwarded: "req-42" });
  });

  it("are made for a call that arrives without one, and absent outside any call", async () => {
    const served = callScope()(async (req) => ({ header: req.header.get("x-request-id"), seen: currentRequestId() }) as never);
    const { header, seen } = (await served(request())) as unknown as { header: string; seen: string };
    expect(header).toMatch(/^[0-9a-f-]{36}$/);
    expect(seen).toBe(header);
    expect(currentRequestId()).toBeUndefined();
  });
});
