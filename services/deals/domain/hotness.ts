// The offer's hot@1 rank is the kit's `hotness` (kit/handler/hotness.ts), over the weighted tally below.

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
