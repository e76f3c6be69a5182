import Fastify from "fastify";
import type { AddressInfo } from "node:net";
import { localProvider } from "../services/ai/providers/local/index.js";
import { serverEvents } from "../services/ai/providers/sse.js";
import { startOpenAiServer } from "../tests/ai/support/openai-server.js";
import { percentile, runLoad, type Benchmark, type LoadResult, type LoadTarget } from "./load.js";
import { startBenchPlatform, type BenchPlatform } from "./platform.js";

const TEXT =
  "Chip makers rallied after strong earnings. Demand for data-centre chips kept growing. " +
  "Analysts expect supply to stay tight through the year.";
/** Streams timed one after another: first-token latency, not throughput. */
const STREAMS = 200;

/**
 * `ai runs`: (a) a summarize run on the local stub provider through the gateway (admission, quota reservation and
 * settlement, the run's rows, the request log) against the same stub call behind a bare Fastify route; (b) the
 * first-token latency StreamChat adds: a chat streamed through the gateway from an OpenAI-compatible loopback
 * server, against the same stream read straight from that server.
 */
export const aiRuns: Benchmark = {
  name: "ai runs",
  async run(settings) {
    const loopback = await startOpenAiServer();
    // A short streamed answer to every streamed request, straight away.
    loopback.script((request) =>
      request.body?.stream ? { kind: "stream", chunks: ["Chips ", "are ", "small."] } : { kind: "answer" },
    );
    const bench = await startBenchPlatform({
      PF_SERVICES: "ai",
      PF_AI_PROVIDER_HOSTS: loopback.host,
    });
    const bare = Fastify();
    try {
      const runner = await bench.platform.mintToken({ kind: "service", svc: "trade", caps: ["ai.run.create"] });
      await prepare(bench, loopback.url);
      bare.post<{ Body: { text: string } }>("/summarize", async (request) => {
        const call = stubCall(request.body.text);
        return { run: { state: "succeeded", output: await localProvider.call(call) } };
      });
      await bare.listen({ port: 0, host: "127.0.0.1" });
      const body = JSON.stringify({ text: TEXT, no_cache: true });
      const headers = { "content-type": "application/json", authorization: `Bearer ${runner}` };
      const post = (url: string): LoadTarget => ({ url, method: "POST", body, headers });
      const route = `${bench.gatewayUrl}/ai/api/v1/summarize`;
      const sample = await fetch(route, { method: "POST", body, headers });
      if (!sample.ok) throw new Error(`the summarize route answered ${sample.status}: ${await sample.text()}`);
      const port = (bare.server.address() as AddressInfo).port;
      const reference = await runLoad(
        "bare fastify, stub summarize",
        post(`http://127.0.0.1:${port}/summarize`),
        settings,
      );
      const measured = await runLoad(`summarize run, stub (${bench.database})`, post(route), settings);

      const direct = await firstTokens("loopback stream, direct: first token", () =>
        fetch(`${loopback.url}/chat/completions`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ model: "m1", stream: true, messages: [{ role: "user", content: "Hi" }] }),
        }),
      );
      const streamed = await firstTokens(`StreamChat via gateway (${bench.database}): first token`, () =>
        fetch(`${bench.gatewayUrl}/ai/api/v1/chat/stream`, {
          method: "POST",
          headers: { ...headers, accept: "text/event-stream" },
          body: JSON.stringify({ model: "loop/m1", messages: [{ role: "user", content: "Hi" }] }),
        }),
      );
      return {
        rows: [reference, measured, direct, streamed],
        notes: [
          `ratio run/bare: ${(measured.rps / reference.rps).toFixed(2)}; per run the service adds ` +
            `${(measured.p50 - reference.p50).toFixed(2)} ms at p50, ${(measured.p99 - reference.p99).toFixed(2)} ms at p99 ` +
            `(${settings.connections} connections)`,
          `first token added by StreamChat over the provider's own: p50 ${(streamed.p50 - direct.p50).toFixed(2)} ms, ` +
            `p99 ${(streamed.p99 - direct.p99).toFixed(2)} ms (${STREAMS} streams, one at a time)`,
        ],
      };
    } finally {
      await bare.close();
      await bench.stop();
      await loopback.close();
    }
  },
};

/** The bench's caller out of its quotas' way, and a provider `loop` at the loopback server with a chat model. */
async function prepare(bench: BenchPlatform, loopbackUrl: string): Promise<void> {
  const admin = await bench.platform.mintToken({ kind: "service", svc: "ops", caps: ["ai.provider.manage"] });
  const call = async (path: string, body: unknown) => {
    const answer = await fetch(`${bench.gatewayUrl}/ai/api/v1${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${admin}` },
      body: JSON.stringify(body),
    });
    if (!answer.ok) throw new Error(`POST ${path} answered ${answer.status}: ${await answer.text()}`);
  };
  await call("/quotas", { scope: "caller", subject: "*", window: "minute", max_requests: 0, max_tokens: 0 });
  await call("/quotas", { scope: "caller", subject: "*", window: "day", max_requests: 0, max_tokens: 0 });
  await call("/providers", { key: "loop", kind: "openai", base_url: loopbackUrl, max_retries: 0 });
  const model = { provider: "loop", model: "m1", operations: ["chat"], context_tokens: 8000, max_output_tokens: 500 };
  await call("/models", model);
}

/** The call the summarize route makes of the stub for this text. */
const stubCall = (text: string) => ({
  operation: "summarize" as const,
  model: "extractive",
  instruction: "",
  messages: [],
  task: { text, documents: [], labels: [], fields: [], inputs: [] },
  maxOutputTokens: 1024,
  timeoutMs: 30_000,
  signal: new AbortController().signal,
});

/** Opens `STREAMS` streams one after another, timing each from its request to its first piece of text. */
async function firstTokens(label: string, open: () => Promise<Response>): Promise<LoadResult> {
  const times = new Float64Array(STREAMS);
  let failures = 0;
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let index = 0; index < STREAMS; index++) {
    const sent = performance.now();
    const response = await open();
    let first = NaN;
    for await (const event of serverEvents(response.body ?? new ReadableStream())) {
      if (Number.isNaN(first) && isText(event)) first = performance.now() - sent;
    }
    if (!response.ok || Number.isNaN(first)) failures++;
    times[index] = first;
  }
  const used = process.cpuUsage(cpu);
  const sorted = times.filter((time) => !Number.isNaN(time)).sort();
  return {
    label,
    requests: STREAMS,
    rps: STREAMS / ((performance.now() - started) / 1000),
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    failures,
    cpuPerRequest: (used.user + used.system) / STREAMS,
  };
}

/** A piece of text: the gateway's `delta` event, or an OpenAI chunk with content. */
function isText(event: { event: string; data: string }): boolean {
  if (event.event === "delta") return true;
  if (event.data === "[DONE]") return false;
  const chunk = JSON.parse(event.data) as { choices?: { delta?: { content?: string } }[] };
  return (chunk.choices?.[0]?.delta?.content ?? "") !== "";
}
