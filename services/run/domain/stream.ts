import { invalid } from "../../kit/handler/problem.js";

/** The UTF-8 bytes of a text. */
export function byteLength(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

/** The longest start of `text` within `bytes` UTF-8 bytes, never cutting a character. */
export function cutToBytes(text: string, bytes: number): string {
  let used = 0;
  let end = 0;
  for (const char of text) {
    const size = byteLength(char);
    if (used + size > bytes) break;
    used += size;
    end += char.length;
  }
  return text.slice(0, end);
}

/**
 * How much of a chunk of output a job keeps, given what it kept so far and its bound: all of it while under the
 * bound, the part that fits (marked truncated) when it reaches it, nothing after.
 */
export function kept(text: string, keptBytes: number, maxBytes: number): { text: string; truncated: boolean } {
  const room = maxBytes - keptBytes;
  if (room <= 0) return { text: "", truncated: true };
  if (byteLength(text) <= room) return { text, truncated: false };
  return { text: cutToBytes(text, room), truncated: true };
}

/**
 * Where a stream resumes: after the event the Last-Event-ID header names (else the `last_event_id` query
 * parameter), 0 for the start. An id is a number this service gave (digits only).
 */
export function resumePoint(header: string | null, query: string): number {
  const id = header ?? query;
  if (id === "") return 0;
  if (!/^[0-9]{1,18}$/.test(id)) throw invalid("Last-Event-ID", "Last-Event-ID is the id of an event of this stream.");
  return Number(id);
}

/** An event of a job's stream as a wake hands it: its SSE id is its seq. */
interface Sequenced {
  id: string;
}

/**
 * The stream events wakes handed one open stream, beyond what it sent: the commit's own and the bus's copies of
 * them, in any order and twice over. `after(sent)` answers the run that follows `sent` without a gap ([] when
 * nothing new came), or undefined when one is missing (a wake lost, or more held than `bound`): the stream reads its
 * persisted events instead.
 */
export class HeardEvents<Event extends Sequenced> {
  private readonly bySeq = new Map<number, Event>();
  private overflowed = false;

  constructor(private readonly bound: number) {}

  add(events: readonly Event[]): void {
    for (const event of events) {
      if (this.bySeq.size >= this.bound) this.overflowed = true;
      else this.bySeq.set(Number(event.id), event);
    }
  }

  after(sent: number): Event[] | undefined {
    for (const seq of this.bySeq.keys()) if (seq <= sent) this.bySeq.delete(seq);
    const run: Event[] = [];
    for (let next = this.bySeq.get(sent + 1); next; next = this.bySeq.get(sent + 1 + run.length)) {
      run.push(next);
      this.bySeq.delete(sent + run.length);
    }
    if (this.bySeq.size === 0 && !this.overflowed) return run;
    // The read answers everything after `sent`: what is held is dropped.
    this.overflowed = false;
    this.bySeq.clear();
    return undefined;
  }
}
