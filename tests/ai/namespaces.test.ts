import { getOption } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { AiService } from "../../gen/pf/ai/v1/ai_pb.js";
import { http as httpOption } from "../../gen/google/api/annotations_pb.js";
import { namespace_claim } from "../../gen/pf/v1/options_pb.js";
import { usePlatform, type HttpAnswer } from "../support/platform.js";

const t = usePlatform({ services: ["ai"] });

const DOCUMENTS = [{ id: "src_1", text: "Shares of ACME rose four percent after the company raised its forecast." }];
const TEXT = "ACME shares rose four percent on Tuesday after chip demand grew.";

/** What each run route needs to succeed on the local provider, by its path. */
const inputs: Record<string, Record<string, unknown>> = {
  "/api/v1/runs": { workflow: "reviews.summarize_entity", variables: { entity: "ACME" }, documents: DOCUMENTS },
  "/api/v1/chat": { messages: [{ role: "user", content: "What moved ACME?" }] },
  "/api/v1/chat/stream": { messages: [{ role: "user", content: "What moved ACME?" }] },
  "/api/v1/generate": { text: "Write a line about chips." },
  "/api/v1/summarize": { documents: DOCUMENTS },
  "/api/v1/classify": { text: TEXT, labels: ["markets", "sports"] },
  "/api/v1/extract": { text: TEXT, fields: ["company"] },
  "/api/v1/enrich": { text: TEXT },
  "/api/v1/embed": { inputs: ["chip demand"] },
};

/** The routes whose request names a namespace the token's ns claim holds (`namespace_claim`), with their path. */
const claimed = AiService.methods
  .filter((method) => getOption(method, namespace_claim).fields.length > 0)
  .map((method) => ({ name: method.localName, path: getOption(method, httpOption).pattern.value as string }));

const trade = () => t.token({ kind: "service", sub: "svc:trade", caps: ["ai.run.create"], ns: ["trade"] });
const unlimited = () => t.token({ kind: "service", sub: "svc:reviews", caps: ["ai.run.create"] });

/** A run route's answer: its status and JSON body (a problem, or the run); none for a stream that started. */
async function send(
  path: string,
  token: string,
  body: Record<string, unknown>,
): Promise<{ status: number; body?: HttpAnswer["body"] }> {
  const response = await fetch(`${t.gatewayUrl}/ai${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    // The stream never reads the cache, so it does not take no_cache.
    body: JSON.stringify(path.endsWith("/stream") ? body : { ...body, no_cache: true }),
  });
  const type = response.headers.get("content-type") ?? "";
  if (type.includes("text/event-stream")) {
    await response.body?.cancel();
    return { status: response.status };
  }
  return { status: response.status, body: (await response.json()) as HttpAnswer["body"] };
}

describe("the token's ns claim on the run routes", () => {
  it("covers every run route (9), each checking workflow and namespace", () => {
    expect(claimed.map((route) => route.name).sort()).toEqual(
      ["createRun", "chat", "classify", "embed", "enrich", "extract", "generate", "summarize", "streamChat"].sort(),
    );
    for (const route of claimed) expect(inputs[route.path], route.path).toBeDefined();
  });

  describe.each(claimed)("$name", ({ path }) => {
    const input = inputs[path]!;
    // CreateRun names its namespace through its workflow; the direct operations through `namespace` (each route
    // refuses the other field as one it does not read).
    const runs = path === "/api/v1/runs";
    const outside = runs ? { workflow: "reviews.summarize_entity" } : { namespace: "reviews" };

    it("refuses a token whose ns lacks the namespace named (403 ai.namespace_refused), before the handler", async () => {
      for (const named of runs ? [outside, { workflow: "reviews.x" }] : [outside]) {
        // Without the input the handler would need, so a refusal can come only from the claim.
        const answer = await send(path, await trade(), named);
        expect(answer.body, `${path} ${JSON.stringify(named)}`).toMatchObject({
          status: 403,
          code: "ai.namespace_refused",
          namespace: "reviews",
        });
      }
    });

    it("lets a token without ns name any namespace, and one with it name its own", async () => {
      const free = await send(path, await unlimited(), { ...input, ...outside });
      expect(free.status, JSON.stringify(free.body)).toBe(200);
      if (free.body) expect(free.body.run).toMatchObject({ state: "succeeded", namespace: "reviews" });
      const own = path === "/api/v1/runs" ? { workflow: "trade.summarize_market_context" } : { namespace: "trade" };
      const variables = path === "/api/v1/runs" ? { variables: { symbol: "ACME" } } : {};
      const held = await send(path, await trade(), { ...input, ...own, ...variables });
      expect(held.status, JSON.stringify(held.body)).toBe(200);
      if (held.body) expect(held.body.run).toMatchObject({ state: "succeeded", namespace: "trade" });
    });
  });
});
