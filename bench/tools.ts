import Fastify from "fastify";
import type { AddressInfo } from "node:net";
import type { ToolsContext } from "../services/tools/context.js";
import { textTools } from "../services/tools/families/text.js";
import type { JsonObject } from "../services/tools/catalogue/descriptor.js";
import { runLoad, type Benchmark, type LoadTarget } from "./load.js";
import { startBenchPlatform } from "./platform.js";

/** The run: a short text's SHA-256, as a person would ask for it. */
const BODY = JSON.stringify({ input: { text: "The quick brown fox jumps over the lazy dog", algorithm: "sha256" } });

/**
 * `tools inline runs`: text.hash through the run route (gateway: admission and the tool's relation, the JSON body
 * as the stream's one message; the handler: schema check, quota held and settled in two short transactions, the
 * tool within its time budget, its output checked) against the same function behind a bare Fastify route answering
 * the same JSON. Every run comes from one anonymous caller (one address), so its quota row orders them: the
 * worst case of one busy client.
 */
export const toolsInlineRuns: Benchmark = {
  name: "tools inline runs",
  async run(settings) {
    // One caller runs them all: its light quota out of the way.
    const bench = await startBenchPlatform({ PF_SERVICES: "tools", PF_TOOLS_QUOTA_LIGHT: String(2 ** 50) });
    const bare = Fastify();
    try {
      const ctx = bench.platform.contexts.get("tools") as ToolsContext;
      const hash = textTools["text.hash"];
      // A hash never waits, so nothing would stop it early: a signal that never aborts.
      const signal = new AbortController().signal;
      bare.post<{ Body: { input: JsonObject } }>("/run", async (request) => {
        const started = performance.now();
        const output = await hash(request.body.input, { ctx, caller: "bench", signal });
        return {
          tool: "text.hash",
          state: "succeeded",
          output,
          cost: 1,
          took_ms: Math.round(performance.now() - started),
        };
      });
      await bare.listen({ port: 0, host: "127.0.0.1" });
      const headers = { "content-type": "application/json" };
      const post = (url: string): LoadTarget => ({ url, method: "POST", body: BODY, headers });
      const route = `${bench.gatewayUrl}/tools/api/v1/tools/text.hash/run`;
      const sample = await fetch(route, { method: "POST", body: BODY, headers });
      if (!sample.ok) throw new Error(`the run route answered ${sample.status}: ${await sample.text()}`);
      const reference = await runLoad(
        "bare fastify",
        post(`http://127.0.0.1:${(bare.server.address() as AddressInfo).port}/run`),
        settings,
      );
      const measured = await runLoad(`run route (${bench.database})`, post(route), settings);
      return {
        rows: [reference, measured],
        notes: [
          `ratio run route/bare: ${(measured.rps / reference.rps).toFixed(2)} (no goal: each run spends its quota in one PostgreSQL statement, on one caller's row here)`,
          `server CPU per run: run route ${(measured.cpuPerRequest / reference.cpuPerRequest).toFixed(1)}× bare`,
        ],
      };
    } finally {
      await bare.close();
      await bench.stop();
    }
  },
};
