/** A job's states: queued → running → succeeded | failed | canceled (a lost executor's job goes back to queued). */
export type JobState = "queued" | "running" | "succeeded" | "failed" | "canceled";

/** What a job event says happened (its `kind`, the SSE event a watcher reads). */
export type JobEventKind = "queued" | "started" | "progress" | "succeeded" | "failed" | "canceled" | "expired";

/** Whether a job has ended: nothing runs it any more and its state never changes again. */
export function hasEnded(state: string): boolean {
  return state === "succeeded" || state === "failed" || state === "canceled";
}

/** A progress a tool reports, as stored: a whole percent from 0 to 100 (anything else is brought within). */
export function percentOf(value: number): number {
  if (!Number.isFinite(value)) return 0;
  return Math.min(100, Math.max(0, Math.floor(value)));
}
