import { runProbe } from "../../domain/probes/probe.js";
import { normalHost } from "../../domain/probes/target.js";
import { connectOnce } from "../../domain/probes/tcp.js";
import type { InlineTool } from "../tool.js";

/**
 * net.latency: `count` TCP connects to host:port one after the other, each closed at once; the time each took to
 * be answered (accepted or refused: either is a round trip), and their minimum, mean and maximum.
 */
export const latency: InlineTool = async (input, call) => {
  const host = normalHost(input.host as string);
  const port = (input.port as number | undefined) ?? 443;
  const count = (input.count as number | undefined) ?? 3;
  const timeoutMs = (input.timeout_ms as number | undefined) ?? 1_000;
  return runProbe(call, "net.latency", { host, port, over: "connect" }, async (address) => {
    const samples: (number | null)[] = [];
    for (let n = 0; n < count; n++) samples.push((await connectOnce(address, port, timeoutMs, call.signal)).ms);
    const answered = samples.filter((ms): ms is number => ms !== null);
    const mean = answered.reduce((sum, ms) => sum + ms, 0) / answered.length;
    return {
      host,
      port,
      address,
      sent: count,
      answered: answered.length,
      min_ms: answered.length ? Math.min(...answered) : null,
      avg_ms: answered.length ? Math.round(mean * 100) / 100 : null,
      max_ms: answered.length ? Math.max(...answered) : null,
      samples_ms: samples,
    };
  });
};
