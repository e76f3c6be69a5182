import { ConnectError, type UnaryRequest } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { ProblemSchema } from "../../gen/pf/v1/problem_pb.js";
import { createLogger } from "../../services/kit/runtime/logger.js";
import { problem } from "../../services/kit/handler/problem.js";
import { CallGuard } from "../../services/kit/rpc/guard.js";

const request = { method: { name: "Probe" } } as unknown as UnaryRequest;

describe("the call guard", () => {
  it("answers a crash as a bare 500 problem without its internals, and lets problems through", async () => {
    const guard = new CallGuard(createLogger("silent"));
    const crash = guard.interceptor()(async () => {
      throw new TypeError("cannot read secret_column of undefined");
    });
    const error = await crash(request).catch((e: unknown) => e as ConnectError);
    const [found] = (error as ConnectError).findDetails(ProblemSchema);
    expect(found).toMatchObject({ status: 500, code: "internal" });
    expect(JSON.stringify(found)).not.toContain("secret_column");
    const refused = guard.interceptor()(async () => {
      throw problem(409, "insufficient_funds", "short");
    });
    await expect(refused(request)).rejects.toMatchObject({ rawMessage: "short" });
  });

  it("lets the calls being served finish before the host goes on stopping", async () => {
    const guard = new CallGuard(createLogger("silent"));
    let finish!: () => void;
    const slow = guard.interceptor()(() => new Promise((resolve) => (finish = () => resolve({} as never))));
    const call = slow(request);
    let drained = false;
    const draining = guard.drained(5_000).then(() => (drained = true));
    // Another stop that gives up after 1 ms has given up: the call still being served held the first one.
    await guard.drained(1);
    expect(drained).toBe(false);
    finish();
    await call;
    await draining;
    expect(drained).toBe(true);
    await expect(guard.drained(5_000)).resolves.toBeUndefined();
  });
});
