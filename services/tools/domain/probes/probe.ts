import { problemOf } from "../../../kit/handler/problem.js";
import { endProbeLog, insertProbeLog } from "../../db/probe-log.js";
import type { InlineCall } from "../../families/tool.js";
import { aimAt, type ProbeTarget } from "./aim.js";
import { targetKey } from "./target.js";
import { countTargetRun } from "./throttle.js";

/**
 * Runs one probe of `tool` at a target, the same way for every probe tool: aimed (resolved once, every answer
 * checked, 400 tools.target_refused inside), counted against the target's throttle across all callers (429
 * tools.target_throttled), then `work` at the checked address itself (never the name again: DNS cannot rebind
 * between the check and the connection). Every run is in the abuse log: keyed hashes of the caller and the
 * target, the tool and the outcome. A run that reaches a target is logged in the short transaction that counts
 * it, before any packet leaves, and its outcome written after; a refused or throttled one is logged as such.
 */
export async function runProbe<T>(
  call: InlineCall,
  toolId: string,
  target: ProbeTarget,
  work: (address: string) => Promise<T>,
): Promise<T> {
  const { ctx } = call;
  const tool = ctx.catalogue.available(toolId);
  const callerHash = ctx.clientKeys.pseudonymOf("tools.probe.caller", call.caller);
  const entry = async (reached: string | undefined, outcome: string) => ({
    tool: tool.id,
    callerHash,
    targetHash: ctx.clientKeys.pseudonymOf("tools.probe.target", targetKey(reached, target.host)),
    outcome,
    at: ctx.clock.now(),
  });
  let logged: string;
  let address: string | undefined;
  try {
    address = await aimAt(ctx, target, call.signal);
    const started = await entry(address, "started");
    logged = await ctx.transaction(async (em) => {
      await countTargetRun(ctx, tool, started.targetHash, em);
      return insertProbeLog(em, started);
    });
  } catch (error) {
    const refusal = await entry(address, outcomeOf(error));
    await ctx.transaction((em) => insertProbeLog(em, refusal));
    throw error;
  }
  const end = (outcome: string) => ctx.transaction((em) => endProbeLog(em, logged, outcome));
  let result: T;
  try {
    result = await work(address);
  } catch (error) {
    await end("failed");
    throw error;
  }
  await end("succeeded");
  return result;
}

/** What the log says of a run stopped before it reached its target. */
function outcomeOf(error: unknown): string {
  const { code } = problemOf(error);
  if (code === "tools.target_refused") return "refused";
  if (code === "tools.target_throttled") return "throttled";
  return "failed";
}
