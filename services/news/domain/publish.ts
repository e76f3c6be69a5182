/**
 * The publish gate (spec, story revision: "cites at least one source; no source
 * removed upstream or detached; AI-generated or AI-assisted revisions need a
 * person's approval"), evaluated against the current state of the story.
 */

/** Why a revision cannot be published now. */
export type Problem =
  "no_source" | "source_removed_upstream" | "source_detached" | "ai_approval_required" | "blocking_flag";

/** What the gate reads of a revision. */
export interface GateRevision {
  /** Every source number the headline and paragraphs cite. */
  cited: number[];
  /** Every source number the revision rests on: its citations and its timeline's sources. */
  restsOn: number[];
  ai: boolean;
  aiAssisted: boolean;
  approved: boolean;
  answersFlags: string[];
}

/** A source table entry as it is now. */
export interface CurrentSource {
  detached: boolean;
  removedUpstream: boolean;
}

/** The problems, in a fixed order; empty when the revision can be published. */
export function publishProblems(
  revision: GateRevision,
  sources: Map<number, CurrentSource>,
  openBlockingFlags: string[],
): Problem[] {
  const problems: Problem[] = [];
  if (revision.cited.length === 0) problems.push("no_source");
  const rested = [...new Set(revision.restsOn)].map((number) => sources.get(number));
  if (rested.some((source) => source?.removedUpstream)) problems.push("source_removed_upstream");
  if (rested.some((source) => source === undefined || source.detached)) problems.push("source_detached");
  if ((revision.ai || revision.aiAssisted) && !revision.approved) problems.push("ai_approval_required");
  if (openBlockingFlags.some((flag) => !revision.answersFlags.includes(flag))) problems.push("blocking_flag");
  return problems;
}

/** What lineage reads of the revision a new one rests on. */
export interface BaseRevision {
  ai: boolean;
  aiAssisted: boolean;
  approved: boolean;
}

/**
 * Whether a person's revision is AI-assisted: the editor says so, or it rests on an AI-generated or AI-assisted
 * revision no person approved (as blog's lineage): an editor cannot clear an unapproved AI draft by saving over it.
 */
export function aiAssisted(claimed: boolean, base: BaseRevision | undefined): boolean {
  return claimed || (base !== undefined && (base.ai || base.aiAssisted) && !base.approved);
}
