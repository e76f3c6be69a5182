import { ManualClock } from "../../services/kit/runtime/clock.js";
import { claimRun } from "../../services/sources/db/runs.js";
import type { FetchedEntry, FetchOutcome } from "../../services/sources/fetch/fetch-source.js";
import { applyOutcome } from "../../services/sources/workers/apply.js";
import type { TestPlatform } from "../support/platform.js";
import { type caller, sourcesOf } from "./support.js";

/** A parser's entry with defaults. */
export const entry = (canonicalUrl: string, extra: Partial<FetchedEntry> = {}): FetchedEntry => ({
  canonicalUrl,
  title: "A filing",
  content: "Text of the filing.",
  identifiers: {},
  ...extra,
});

/** A successful fetch's outcome carrying these entries. */
export const succeeded = (entries: FetchedEntry[]): FetchOutcome => ({
  state: "succeeded",
  httpStatus: 200,
  bytes: 1234,
  etag: '"v1"',
  rawBodyHash: "b".repeat(64),
  parserVersion: "rss@1",
  entries,
});

/**
 * Triggers a fetch of `key` and runs it as the executor does, with `outcome` standing for what fetchSource answered
 * (the fixture-server tests drive the real fetch): claimed, then applied in one transaction. Answers the run id.
 */
export async function runWith(
  t: TestPlatform,
  call: ReturnType<typeof caller>,
  key: string,
  outcome: FetchOutcome,
  worker = "test-worker",
): Promise<string> {
  const ctx = sourcesOf(t);
  // One request per host and second: a manual clock moves past the host's turn.
  if (ctx.clock instanceof ManualClock) ctx.clock.advance(1_000);
  const trigger = await call("POST", `/sources/${key}/fetch`, {});
  if (trigger.status !== 202) throw new Error(`trigger failed: ${trigger.status} ${JSON.stringify(trigger.body)}`);
  const claimed = await ctx.transaction((em) => claimRun(em, worker, ctx.clock.now(), 60_000, 1_000, key));
  if (!claimed || claimed.id !== trigger.body.run.id)
    throw new Error(`claimed ${claimed?.id ?? "nothing"}, not ${trigger.body.run.id}`);
  await applyOutcome(ctx, claimed, worker, outcome, ctx.clock.now());
  return claimed.id;
}
