import type { EntityManager } from "@mikro-orm/postgresql";
import { problem } from "../../../kit/handler/problem.js";
import { spend, type Quota } from "../../../kit/quotas/quotas.js";
import type { ToolDescriptor } from "../../catalogue/descriptor.js";
import type { ToolsContext } from "../../context.js";

const MINUTE_MS = 60_000;

/** A probe tool's per-target throttle: `limits.perTargetPerMinute` runs at one target per minute, whoever calls. */
function targetQuota(tool: ToolDescriptor): Quota {
  const limit = tool.limits.perTargetPerMinute ?? 0;
  return {
    name: "tools.probe_target",
    limit,
    windowMs: MINUTE_MS,
    expireAfterMs: MINUTE_MS,
    // A windowed quota's refusal always says when its window ends.
    refused: (_key, retryAfterSeconds = 60) =>
      problem(
        429,
        "tools.target_throttled",
        `The target has taken its ${limit} runs of ${tool.id} this minute, from all callers together; try again in ${retryAfterSeconds} seconds.`,
        { tool: tool.id, limit, retry_after_seconds: retryAfterSeconds },
      ),
  };
}

/**
 * Counts one run of `tool` at a target (`targetHash`: its keyed hash, so the kit's counters never hold the
 * address), or 429 tools.target_throttled counting nothing. Counted with the kit's quotas on the target's locked
 * counter, so callers at once never pass the limit together; spent in `em`, the caller's short transaction (a run
 * that goes out is counted, whatever it finds).
 */
export async function countTargetRun(
  ctx: ToolsContext,
  tool: ToolDescriptor,
  targetHash: string,
  em: EntityManager,
): Promise<void> {
  await spend(ctx, targetQuota(tool), `${tool.id}:${targetHash}`, 1, em);
}
