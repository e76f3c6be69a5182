/**
 * hot@1, the service's ranking of an offer (never taken from a request):
 *
 *   hot = sign(score) · log10(max(|score|, 1)) + (created − 2026-01-01T00:00:00Z) / 45000 s
 *
 * where score is the offer's weighted vote sum (across its merge group). The
 * first ten points count as much as the next hundred, and an offer 12.5 hours
 * newer ranks as one with ten times the score: newer deals rise, old ones sink
 * without any offer being rewritten as time passes. Rounded to 7 decimals so
 * equal inputs give equal answers wherever it is computed.
 */
export const HOTNESS_EPOCH_MS = Date.UTC(2026, 0, 1);
export const HOTNESS_HALF_DAY_SECONDS = 45_000;

export function hotness(score: number, createdAt: Date): number {
  const order = Math.log10(Math.max(Math.abs(score), 1));
  const sign = score > 0 ? 1 : score < 0 ? -1 : 0;
  const age = (createdAt.getTime() - HOTNESS_EPOCH_MS) / 1000 / HOTNESS_HALF_DAY_SECONDS;
  return Math.round((sign * order + age) * 1e7) / 1e7;
}

/** A vote's weight, set by the service: a network user counts 1, a guest 0.5. */
export function voteWeight(voter: string): number {
  return voter.startsWith("usr_") ? 1 : 0.5;
}

/** One counted vote: a voter's latest vote still present. */
export interface CountedVote {
  voter: string;
  value: number;
  weight: number;
  at: Date;
}

export interface VoteTally {
  score: number;
  up: number;
  down: number;
  voters: number;
}

/**
 * The tally of present votes across a merge group: a voter who voted on
 * several offers of the group counts once, with their latest vote.
 */
export function tallyVotes(votes: CountedVote[]): VoteTally {
  const latest = new Map<string, CountedVote>();
  for (const vote of votes) {
    const seen = latest.get(vote.voter);
    if (!seen || seen.at < vote.at) latest.set(vote.voter, vote);
  }
  const tally: VoteTally = { score: 0, up: 0, down: 0, voters: latest.size };
  for (const vote of latest.values()) {
    tally.score += vote.value * vote.weight;
    if (vote.value > 0) tally.up++;
    else tally.down++;
  }
  tally.score = Math.round(tally.score * 1e6) / 1e6;
  return tally;
}
