import { Code, ConnectError, createContextValues, type UnaryRequest } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import {
  callScope,
  commitWithin,
  currentCall,
  currentRequestId,
  deadlineKey,
  callerRefused,
  notAnswered,
  propagateCall,
} from "../../services/kit/runtime/call.js";
import { problem } from "../../services/kit/handler/problem.js";
import { until, untilPast } from "../support/until.js";

const request = (headers: Record<string, string> = {}) =>
  ({
    header: new Headers(headers),
    signal: new AbortController().signal,
    contextValues: createContextValues(),
  }) as unknown as UnaryRequest;

describe("request ids", () => {
  it("cross from a served call into the calls it makes", async () => {
    const outgoing = propagateCall()(async (req) => req.header.get("x-request-id") as never);
    const served = callScope(10_000)(
      async () => ({ seen: currentRequestId(), forwarded: await outgoing(request()) }) as never,
    );
    expect(await served(request({ "x-request-id": "req-42" }))).toEqual({ seen: "req-42", forwarded: "req-42" });
  });

  it("are made for a call that arrives without one, and absent outside any call", async () => {
    const served = callScope(10_000)(
      async (req) => ({ header: req.header.get("x-request-id"), seen: currentRequestId() }) as never,
    );
    const { header, seen } = (await served(request())) as unknown as { header: string; seen: string };
    expect(header).toMatch(/^[0-9a-f-]{36}$/);
    expect(seen).toBe(header);
    expect(currentRequestId()).toBeUndefined();
  });

  it("replace one that is not a bounded token-like value (RPC callers as well as the gateway's)", async () => {
    const served = callScope(10_000)(async () => currentRequestId() as never);
    for (const sent of ["x".repeat(129), "r\u00e9q", "a b", "x".repeat(8192)]) {
      const seen = (await served(request({ "x-request-id": sent }))) as unknown as string;
      expect(seen).toMatch(/^[0-9a-f-]{36}$/);
    }
    expect(await served(request({ "x-request-id": "x".repeat(128) }))).toBe("x".repeat(128));
  });
});

describe("calls made from calls, in process", () => {
  const inner = (deadline: number) =>
    ({
      header: new Headers(),
      signal: new AbortController().signal,
      contextValues: createContextValues().set(deadlineKey, deadline),
    }) as unknown as UnaryRequest;

  it("never outlive the call they were made from", async () => {
    const outer = callScope(10_000)(async () => {
      const seen = await callScope(10_000)(async () => currentCall()!.deadline as never)(inner(Date.now() + 60_000));
      return { outer: currentCall()!.deadline, inner: seen } as never;
    });
    const { outer: outerDeadline, inner: innerDeadline } = (await outer(request())) as unknown as {
      outer: number;
      inner: number;
    };
    expect(innerDeadline).toBe(outerDeadline);
  });

  it("make the outer call's answer stand once they commit, even if it comes late", async () => {
    const outer = callScope(50)(async () => {
      await callScope(10_000)(async () => (await commitWithin(async () => "written")) as never)(
        inner(Date.now() + 10_000),
      );
      await untilPast(currentCall()!.deadline);
      return "answer" as never;
    });
    await expect(outer(request())).resolves.toBe("answer");
  });

  it("are refused, and commit nothing, once the outer call's deadline passed", async () => {
    const outgoing = propagateCall()(async () => "called" as never);
    const after: string[] = [];
    const outer = callScope(30)(async () => {
      await untilPast(currentCall()!.deadline);
      after.push(await commitWithin(async () => "written").catch((error: Error) => error.message));
      after.push(
        String(
          await outgoing(request()).then(
            () => "answered",
            (error: Error) => error.message,
          ),
        ),
      );
      return "late" as never;
    });
    await expect(outer(request())).rejects.toThrow(/deadline/);
    // The handler went on after its caller was answered: neither its commit nor its call went through.
    await until(() => after.length === 2);
    expect(after.every((outcome) => /deadline/.test(outcome))).toBe(true);
  });
});

describe("a callee not answering (notAnswered)", () => {
  it("is any error without the callee's own problem: a reset (Aborted), a cancellation, Unknown, a timeout, unreachable", () => {
    for (const error of [
      new ConnectError("read ECONNRESET", Code.Aborted),
      new ConnectError("down", Code.Unavailable),
      new ConnectError("deadline", Code.DeadlineExceeded),
      new ConnectError("http 500", Code.Unknown),
      new ConnectError("crash", Code.Internal),
      new ConnectError("cancelled", Code.Canceled),
      new ConnectError("no route", Code.Unimplemented),
      new ConnectError("forbidden", Code.PermissionDenied),
    ]) {
      expect(notAnswered(error), error.message).toBe(true);
    }
  });

  it("is the callee's 5xx, and its problems that say nothing of the request: the caller's own token refused, a timeout, a rate limit, a cancellation", () => {
    for (const error of [
      problem(500, "internal", "failed"),
      problem(503, "billing.unavailable", "busy"),
      problem(504, "deadline", "database too slow"),
      problem(401, "auth.invalid", "another signing key"),
      problem(403, "auth.capability_missing", "no"),
      problem(408, "timeout", "slow"),
      problem(429, "rate.limited", "later"),
      problem(499, "canceled", "gone"),
    ]) {
      expect(notAnswered(error), error.message).toBe(true);
    }
    expect(callerRefused(problem(401, "auth.invalid", "key"))).toBe(true);
    expect(callerRefused(problem(403, "auth.capability_missing", "no"))).toBe(true);
    expect(callerRefused(new ConnectError("reset", Code.Aborted))).toBe(false);
  });

  it("is not the callee's own refusals (its problem), nor a failure of this service", () => {
    for (const error of [
      problem(409, "insufficient_funds", "short"),
      problem(409, "economy.frozen", "frozen"),
      problem(422, "request.invalid", "tier"),
      problem(400, "request.invalid", "amount"),
      problem(404, "x.not_found", "none"),
    ]) {
      expect(notAnswered(error), error.message).toBe(false);
      expect(callerRefused(error), error.message).toBe(false);
    }
    expect(notAnswered(new Error("database down"))).toBe(false);
  });
});
