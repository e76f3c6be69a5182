/**
 * Clustering and the cluster audit, as pure rules (README "Clusters"). Ingestion
 * is deterministic: the same items in the same order make the same clusters.
 */

/** Why an item is in its cluster. */
export interface Explanation {
  method: string;
  evidence: string;
  score: number;
  by: string | null;
  at: string;
}

/** One item moved by an audited change, with its explanations before and after, to reverse exactly. */
export interface Move {
  item: string;
  from: string;
  to: string;
  before: Explanation;
  after: Explanation;
}

/** A cluster's state. */
export interface ClusterState {
  state: "active" | "merged" | "dissolved";
  mergedInto: string | null;
}

/** A cluster's state before and after an audited change. */
export interface ClusterChange {
  id: string;
  before: ClusterState;
  after: ClusterState;
}

/** A title as compared for clustering: lowercase letters and digits, single spaces. */
export function titleKey(title: string): string {
  return title
    .normalize("NFKC")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim();
}

/** The explanation of an item joining a cluster on ingestion. */
export function ingestExplanation(
  match: { kind: "canonical_url" | "title_match"; member: string } | undefined,
  at: Date,
): Explanation {
  if (!match) return { method: "first_item", evidence: "", score: 100, by: null, at: at.toISOString() };
  return { method: match.kind, evidence: match.member, score: 100, by: null, at: at.toISOString() };
}

/** The inverse of an audited change: every move back with the explanation it had, every cluster back to its state. */
export function inverseOf(moves: Move[], clusters: ClusterChange[]): { moves: Move[]; clusters: ClusterChange[] } {
  return {
    moves: moves.map((move) => ({
      item: move.item,
      from: move.to,
      to: move.from,
      before: move.after,
      after: move.before,
    })),
    clusters: clusters.map((change) => ({ id: change.id, before: change.after, after: change.before })),
  };
}
