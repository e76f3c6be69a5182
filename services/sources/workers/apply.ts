import type { EntityManager } from "@mikro-orm/postgresql";
import type { FetchOutcome } from "../fetch/fetch-source.js";
import type { SourcesContext } from "../context.js";
import type { FetchRunRow, SourceRow } from "../db/entities.js";
import { heldRun, runToProto, writeRunEnd } from "../db/runs.js";
import { sourceByKey } from "../db/sources.js";
import { entryOfFetched, storable } from "../domain/items.js";
import { runsFinished } from "../events.js";
import { takeEntries } from "../intake.js";

/** The most of a failure's detail a run keeps. */
const FAILURE_DETAIL_MAX = 500;

/** The source's health after a run ended at `at`. */
function recordAttempt(source: SourceRow, outcome: FetchOutcome, at: Date): void {
  source.lastAttemptAt = at;
  if (outcome.state === "failed") {
    source.consecutiveFailures += 1;
    source.lastFailureClass = outcome.failureClass;
    return;
  }
  Object.assign(source, { lastSuccessAt: at, consecutiveFailures: 0, lastFailureClass: null, staleReported: false });
  if (outcome.state === "succeeded") {
    Object.assign(source, { etag: outcome.etag ?? null, lastModified: outcome.lastModified ?? null });
  }
}

/**
 * Ends a run with its outcome, in the caller's transaction, and tells it. On success it takes the entries as items,
 * leaving out and counting those over a cap or without an identity that fits.
 */
export async function finishRun(
  em: EntityManager,
  run: FetchRunRow,
  source: SourceRow,
  outcome: FetchOutcome,
  at: Date,
) {
  Object.assign(run, { finishedAt: at, leaseUntil: null, httpStatus: outcome.httpStatus ?? null });
  if (outcome.state === "succeeded") {
    const retrieval = {
      retrievedAt: at,
      rawBodyHash: outcome.rawBodyHash,
      parserVersion: outcome.parserVersion,
      terms: source.termsNote,
    };
    const entries = outcome.entries.flatMap((fetched) => {
      const entry = entryOfFetched(fetched);
      return entry ? [{ entry, retrieval }] : [];
    });
    const { counts } = await takeEntries(em, source.key, entries);
    const entriesSkipped = outcome.entries.length - entries.length;
    Object.assign(run, { state: "succeeded", bytes: BigInt(outcome.bytes), ...counts, entriesSkipped });
  } else if (outcome.state === "not_modified") {
    run.state = "not_modified";
  } else {
    Object.assign(run, {
      state: "failed",
      failureClass: outcome.failureClass,
      // Cut, never refused: a detail quoting the source (a tag name, a host) may run long.
      failureDetail: storable(outcome.detail).slice(0, FAILURE_DETAIL_MAX),
    });
  }
  recordAttempt(source, outcome, at);
  await writeRunEnd(em);
  await runsFinished(em, [runToProto(run)]);
}

/**
 * Applies a fetch's outcome in one transaction: items, revisions, the run's end, the source's health and their
 * events. Nothing happens when this worker no longer holds the run running: the reaper ended it (its lease
 * lapsed) or its source was deleted, and an outcome applied twice would count twice.
 */
export async function applyOutcome(
  ctx: SourcesContext,
  claimed: { id: string; sourceKey: string },
  worker: string,
  outcome: FetchOutcome,
  at: Date,
): Promise<boolean> {
  return ctx.transaction(async (em) => {
    // The lock order of a run's end: its source, then the run (as triggers and deletes take them).
    const source = await sourceByKey(em, claimed.sourceKey, true).catch(() => undefined);
    const run = source && (await heldRun(em, claimed.id, worker));
    if (!source || !run) return false;
    await finishRun(em, run, source, outcome, at);
    return true;
  });
}
