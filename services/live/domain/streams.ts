/** A stream's states: live until ended or interrupted, both final. */
export type StreamState = "live" | "ended" | "interrupted";

/** The state after restream reports `reported` for a session now `current` (absent: not seen yet). */
export function nextState(current: StreamState | undefined, reported: string): StreamState {
  const ending = reported === "ended" || reported === "interrupted";
  // An end is final: a started event arriving after it (out of order) never makes the stream live again.
  if (current === "ended" || current === "interrupted") return current;
  return ending ? (reported as StreamState) : "live";
}

/** What a player offers for a stream: none without playback, and seeking only on a recording. */
export function controlsOf(protocol: string, live: boolean): string[] {
  if (!live || protocol === "" || protocol === "none") return [];
  return ["play", "pause", "volume", "fullscreen"];
}
