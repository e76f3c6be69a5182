/**
 * The client of `jobs` in a process of its own, as every other row's load generator is (on 2 cores a client on the
 * platform's event loop would be measured with it): submits `echo` jobs through the gateway with an app's token and
 * reads each one's SSE stream to its end, as an app does. Told a `JobsPlan` over IPC, it runs the warm-up jobs, then
 * each measured phase after saying `measuring`, and sends that phase's times.
 */
import type { JobsChildMessage, JobsPlan } from "./jobs.js";

process.once("message", (plan: JobsPlan) => void run(plan));

async function run(plan: JobsPlan) {
  const job = jobRunner(plan.gatewayUrl, plan.token);
  for (let i = 0; i < plan.warmup; i++) await job(); // the agent's worker, every route, V8's compiled paths
  send({ kind: "measuring" });
  const firstOutput: number[] = [];
  for (let i = 0; i < plan.jobs; i++) firstOutput.push((await job()).firstOutputMs);
  send({ kind: "times", times: firstOutput });

  send({ kind: "measuring" });
  const ended = new Array<number>(plan.burst);
  let next = 0;
  await Promise.all(
    Array.from({ length: plan.concurrency }, async () => {
      for (let i = next++; i < plan.burst; i = next++) ended[i] = (await job()).endedMs;
    }),
  );
  process.send!({ kind: "times", times: ended } satisfies JobsChildMessage, () => process.exit(0));
}

function send(message: JobsChildMessage) {
  process.send!(message);
}

/** Submits an echo job and reads its stream to the end: when its first output and its end arrived. */
function jobRunner(gatewayUrl: string, token: string) {
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  const body = JSON.stringify({
    class: "function",
    artifact: "echo",
    args: { text: "hi" },
    ttl_ms: 60_000,
    limits: {},
  });
  return async () => {
    const start = performance.now();
    const submitted = await fetch(`${gatewayUrl}/run/api/v1/jobs`, { method: "POST", headers, body });
    if (submitted.status !== 201) throw new Error(`submit answered ${submitted.status}: ${await submitted.text()}`);
    const { job } = (await submitted.json()) as { job: { id: string } };
    const stream = await fetch(`${gatewayUrl}/run/api/v1/jobs/${job.id}/stream`, { headers });
    if (stream.status !== 200) throw new Error(`stream answered ${stream.status}: ${await stream.text()}`);
    let firstOutputMs = NaN;
    let text = "";
    const decoder = new TextDecoder();
    for await (const chunk of stream.body!) {
      text += decoder.decode(chunk, { stream: true });
      if (Number.isNaN(firstOutputMs) && text.includes("event: output")) firstOutputMs = performance.now() - start;
      if (/"state":\{"state":"ended"/.test(text)) break;
    }
    const endedMs = performance.now() - start;
    await stream.body!.cancel().catch(() => undefined);
    if (!text.includes('"reason":"completed"')) throw new Error(`job ${job.id} did not complete: ${text.slice(-500)}`);
    return { firstOutputMs, endedMs };
  };
}
