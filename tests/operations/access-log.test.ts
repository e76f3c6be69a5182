import { Writable } from "node:stream";
import { beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../services/kit/runtime/logger.js";
import { usePlatform } from "../support/platform.js";
import { until } from "../support/until.js";
import { actingFor, ALL_DEALS, person } from "../deals/support.js";

const logLines: string[] = [];
const logger = createLogger(
  "info",
  new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(chunk.toString());
      done();
    },
  }),
);
const t = usePlatform({ services: ["deals"], logger });
const WATCHES = "/deals/api/v1/watches";
let token: string;
let as: ReturnType<typeof actingFor>;

beforeAll(async () => {
  token = await t.token({ kind: "service", svc: "web", caps: ALL_DEALS });
  as = actingFor(t, () => token);
});

/** The access log's line of a request, by its request id (waited for: it is written once the answer is sent). */
async function accessLine(requestId: string | null): Promise<Record<string, unknown>> {
  const find = () =>
    logLines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((line) => line.msg === "request" && line.requestId === requestId);
  await until(() => find() !== undefined);
  return find()!;
}

/** The refusal counter's value for these labels, 0 when absent. */
async function problems(labels: Record<string, string>): Promise<number> {
  const text = await (await fetch(t.platform.metricsUrl!)).text();
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  const line = text
    .split("\n")
    .find((l) => l.startsWith("pf_gateway_problems_total{") && wanted.every((w) => l.includes(w)));
  return line ? Number(line.split(" ").at(-1)) : 0;
}

describe("the access log and the refusal counter", () => {
  it("log and count a 401 by route template and code, never the token", async () => {
    const labels = { method: "GET", route: WATCHES, status: "401", code: "auth.required" };
    const before = await problems(labels);
    const refused = await t.http("GET", WATCHES);
    expect(refused.status).toBe(401);
    expect(refused.body.code).toBe("auth.required");
    const line = await accessLine(refused.headers.get("x-request-id"));
    expect(line).toMatchObject({ level: 30, method: "GET", route: WATCHES, status: 401, principal: "anonymous" });
    expect(line.code).toBe("auth.required");
    expect(typeof line.durationMs).toBe("number");
    expect(await problems(labels)).toBe(before + 1);

    // A token not admitted: named as such, its text nowhere in the log.
    const forged = `${token.slice(0, -4)}AAAA`;
    const bad = await t.http("GET", WATCHES, { token: forged, headers: { "x-pf-subject": person() } });
    expect(bad.status).toBe(401);
    expect(await accessLine(bad.headers.get("x-request-id"))).toMatchObject({ status: 401, principal: "unadmitted" });
    expect(await problems({ method: "GET", route: WATCHES, status: "401", code: bad.body.code })).toBeGreaterThan(0);
    expect(logLines.join("")).not.toContain(forged.split(".")[1]);
  });

  it("logs an admitted request with its principal's kind, and counts it nowhere", async () => {
    const answer = await as("GET", "/watches", person());
    expect(answer.status).toBe(200);
    const line = await accessLine(answer.headers.get("x-request-id"));
    expect(line).toMatchObject({ method: "GET", route: WATCHES, status: 200, principal: "service" });
    expect(line.code).toBeUndefined();
    expect(JSON.stringify(line)).not.toContain(token.split(".")[1]);
  });

  it("counts the gateway's other refusals: a body not JSON (415) and an unknown field (400)", async () => {
    const owner = person();
    const media = { method: "POST", route: WATCHES, status: "415", code: "request.unsupported_media_type" };
    const mediaBefore = await problems(media);
    const text = await as("POST", "/watches", owner, undefined, { "content-type": "text/plain" });
    expect(text.status).toBe(415);
    expect(await problems(media)).toBe(mediaBefore + 1);

    const unknown = await as("POST", "/watches", owner, { kind: "WATCH_KIND_KEYWORD", keyword: "lego", bogus: 1 });
    expect(unknown.status).toBe(400);
    const field = { method: "POST", route: WATCHES, status: "400", code: unknown.body.code };
    expect(await problems(field)).toBeGreaterThan(0);
    expect(await accessLine(unknown.headers.get("x-request-id"))).toMatchObject({
      status: 400,
      code: unknown.body.code,
    });
  });

  it("labels the metrics with the process's name and PF_SERVICES", async () => {
    const text = await (await fetch(t.platform.metricsUrl!)).text();
    expect(text).toContain('pf_process_info{process="pf-platform",services="deals"} 1');
  });
});
