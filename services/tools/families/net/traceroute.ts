import { programOf } from "../../domain/probes/binaries.js";
import { runCommand } from "../../domain/probes/command.js";
import { readTraceroute, tracerouteArgs } from "../../domain/probes/icmp.js";
import { runProbe } from "../../domain/probes/probe.js";
import { normalHost } from "../../domain/probes/target.js";
import { ToolFailure, type InlineTool } from "../tool.js";

/**
 * net.traceroute: the routers on the way to a host, one probe per hop (Debian's traceroute, run without a
 * shell), up to `max_hops`; routers in inside ranges answer without their address. Stopped at the run's budget,
 * it answers the hops so far (`complete` false).
 */
export const traceroute: InlineTool = async (input, call) => {
  const host = normalHost(input.host as string);
  const maxHops = (input.max_hops as number | undefined) ?? 20;
  const budgetMs = call.ctx.catalogue.available("net.traceroute").limits.timeoutMs;
  return runProbe(call, "net.traceroute", { host, over: "connect" }, async (address) => {
    // Stopped a second before the run's budget, so the hops so far are answered rather than lost.
    const run = await runCommand(
      programOf("net.traceroute"),
      tracerouteArgs(address, maxHops),
      budgetMs - 1_000,
      call.signal,
    );
    const { hops, reached } = readTraceroute(run.stdout, address);
    if (hops.length === 0 && run.finished)
      throw new ToolFailure("tools.probe.failed", `traceroute could not run here (exit ${run.exitCode ?? "killed"}).`);
    return { host, address, reached, complete: run.finished, hops };
  });
};
