/** A session's states: open while `starting` (authorised) or `live` (media flows); then `ended` or `interrupted`. */
export type SessionState = "starting" | "live" | "ended" | "interrupted";

/** The states of an open session (the partial unique index sessions_one_open holds one per stream). */
export const OPEN_STATES: readonly SessionState[] = ["starting", "live"];

export function isOpen(state: string): boolean {
  return state === "starting" || state === "live";
}

/** A playback descriptor as stored and answered. */
export interface Playback {
  protocol: string;
  url: string;
  reason: string;
}

/** Where viewers play a session now: the worker's descriptor while it is live, else none with the reason. */
export function playbackNow(state: string, stored: Playback | null): Playback {
  if (state === "live")
    return stored ?? { protocol: "none", url: "", reason: "the worker holding the session serves no playback" };
  if (state === "starting") return { protocol: "none", url: "", reason: "the session is not live yet" };
  return {
    protocol: "none",
    url: "",
    reason: state === "interrupted" ? "the session was interrupted" : "the session ended",
  };
}

/** The recording state once media flows: `recording` while the stream's recording setting is on, else `off`. */
export function recordingWhenLive(recordingSetting: boolean): string {
  return recordingSetting ? "recording" : "off";
}

/** The recording state once a session is over: a recording stops, `off` stays off. */
export function recordingWhenOver(recording: string): string {
  return recording === "recording" ? "stopped" : recording;
}

/**
 * Whether a worker's report speaks for an old generation: another generation registered since, or the worker was
 * lost (its sessions interrupted) and has not registered again.
 */
export function isFenced(worker: { generation: number; state: string } | undefined, generation: number): boolean {
  return worker === undefined || worker.generation !== generation || worker.state !== "active";
}
