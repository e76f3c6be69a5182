import { programOf } from "../../domain/probes/binaries.js";
import { runCommand } from "../../domain/probes/command.js";
import { pingArgs, readPing } from "../../domain/probes/icmp.js";
import { runProbe } from "../../domain/probes/probe.js";
import { normalHost } from "../../domain/probes/target.js";
import { ToolFailure, type InlineTool } from "../tool.js";

/** net.ping: `count` ICMP echo requests 0.2 s apart (iputils ping, run without a shell): replies and round trips. */
export const ping: InlineTool = async (input, call) => {
  const host = normalHost(input.host as string);
  const count = (input.count as number | undefined) ?? 4;
  // Its own deadline: the last reply may take 2 s after the last request.
  const deadlineSeconds = Math.ceil(count * 0.2) + 2;
  return runProbe(call, "net.ping", { host, over: "connect" }, async (address) => {
    const run = await runCommand(
      programOf("net.ping"),
      pingArgs(address, count, deadlineSeconds),
      (deadlineSeconds + 1) * 1000,
      call.signal,
    );
    const report = readPing(run.stdout, count);
    if (report === undefined)
      throw new ToolFailure("tools.probe.failed", `ping could not run here (exit ${run.exitCode ?? "killed"}).`);
    return { host, address, ...report };
  });
};
