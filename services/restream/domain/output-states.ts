/** An output's states (designed): `starting` → `live` ⇄ `reconnecting` → `stopped` | `failed`. */
export type OutputState = "starting" | "live" | "reconnecting" | "stopped" | "failed";

/** The states of an output still pushing (or trying to): at most one per destination and session. */
export const RUNNING_STATES: readonly OutputState[] = ["starting", "live", "reconnecting"];

export function isRunning(state: string): boolean {
  return (RUNNING_STATES as readonly string[]).includes(state);
}

/** What a worker's report does to an output. */
export type OutputStep =
  /** The report is about an output that already ended, or moves it backwards: nothing changes. */
  | { kind: "ignored" }
  /** The same state again: only its progress (if any) is kept. */
  | { kind: "same" }
  /** A change of state; `restarted` when the worker restarts the push (one more restart counted). */
  | { kind: "changed"; state: OutputState; restarted: boolean };

const NEXT: Record<OutputState, readonly OutputState[]> = {
  starting: ["live", "reconnecting", "stopped", "failed"],
  live: ["reconnecting", "stopped", "failed"],
  reconnecting: ["live", "stopped", "failed"],
  stopped: [],
  failed: [],
};

/** The step a report of `reported` makes from `current`: a stopped or failed output never comes back. */
export function outputStep(current: OutputState, reported: OutputState): OutputStep {
  if (!isRunning(current)) return { kind: "ignored" };
  if (reported === current) return { kind: "same" };
  if (!NEXT[current].includes(reported)) return { kind: "ignored" };
  return { kind: "changed", state: reported, restarted: reported === "reconnecting" };
}
