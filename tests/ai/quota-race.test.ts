import { describe, expect, it } from "vitest";
import { usePlatform } from "../support/platform.js";
import { operator } from "./runs-support.js";

const t = usePlatform({ services: ["ai"] });

describe("quotas under a race", () => {
  it("lets exactly N of N+9 concurrent runs through a caller quota of N requests", async () => {
    const N = 4;
    const ops = await operator(t);
    // A day's window: a minute's could turn over while the race runs on a loaded machine, and let N more through.
    await ops.call("POST", "/quotas", { scope: "caller", subject: "usr_racer", window: "day", max_requests: N });
    const token = await t.token({ kind: "user", sub: "usr_racer" });
    const answers = await Promise.all(
      Array.from({ length: N + 9 }, (_, i) =>
        t.http("POST", "/ai/api/v1/summarize", { token, body: { text: `Race entry ${i} about chip demand.` } }),
      ),
    );
    const ok = answers.filter((each) => each.status === 200);
    const refused = answers.filter((each) => each.status === 429);
    expect(ok).toHaveLength(N);
    expect(refused).toHaveLength(9);
    for (const each of ok) expect(each.body.run.state).toBe("succeeded");
    for (const each of refused) {
      expect(each.body).toMatchObject({ code: "ai.quota_exceeded", scope: "caller", window: "day" });
      expect(each.body.retry_after_seconds).toBeGreaterThan(0);
    }
    const quotas = await ops.call("GET", "/quotas");
    const racer = quotas.quotas.find(
      (each: { scope: string; subject: string; window: string }) =>
        each.scope === "caller" && each.subject === "usr_racer" && each.window === "day",
    );
    expect(racer.used_requests).toBe(N);
  });
});
