/** Where a dispatched job stands: the frame waits or is on its way, the device acknowledged it, it runs, it ended. */
export type JobState = "dispatched" | "received" | "running" | "ended";

/** What a device says about a job. */
export type DeviceReport = "ack" | "started" | "output" | "exit";

/**
 * The state after a device's report, or undefined when the report changes
 * nothing and is ignored (a repeated ack, a start after the end, anything
 * about an ended job: once ended a job never changes).
 */
export function afterReport(state: JobState, report: DeviceReport): JobState | undefined {
  if (state === "ended") return undefined;
  switch (report) {
    case "ack":
      return state === "dispatched" ? "received" : undefined;
    case "started":
      return state === "dispatched" || state === "received" ? "running" : undefined;
    case "output":
      return state;
    case "exit":
      return "ended";
  }
}

/**
 * Captured output: the first `max` bytes of a stream (UTF-8), cut at a character, never inside one. `seen` is how
 * many bytes of the stream came before `text`: once some were left out, nothing after them is kept (what is kept
 * stays the stream's beginning).
 */
export function appendBounded(captured: string, seen: number, text: string, max: number): string {
  const held = Buffer.byteLength(captured);
  if (seen > held) return captured;
  const room = max - held;
  if (room <= 0) return captured;
  if (Buffer.byteLength(text) <= room) return captured + text;
  let kept = "";
  let bytes = 0;
  for (const char of text) {
    const size = Buffer.byteLength(char);
    if (bytes + size > room) break;
    kept += char;
    bytes += size;
  }
  return captured + kept;
}

/** The first 64 KiB of each stream are kept for the job's read (the contract's bound). */
export const CAPTURE_MAX_BYTES = 64 * 1024;
