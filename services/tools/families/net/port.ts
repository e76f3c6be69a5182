import { runProbe } from "../../domain/probes/probe.js";
import { normalHost } from "../../domain/probes/target.js";
import { connectOnce } from "../../domain/probes/tcp.js";
import type { InlineTool } from "../tool.js";

/** net.port: one TCP connect to host:port, closed at once; open, closed or filtered, and how long it took. */
export const port: InlineTool = async (input, call) => {
  const host = normalHost(input.host as string);
  const port = input.port as number;
  return runProbe(call, "net.port", { host, port, over: "connect" }, async (address) => {
    const { state, ms } = await connectOnce(
      address,
      port,
      (input.timeout_ms as number | undefined) ?? 3_000,
      call.signal,
    );
    return { host, port, address, state, ms };
  });
};
