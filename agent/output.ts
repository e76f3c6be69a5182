/** The most text one output frame carries, in UTF-8 bytes. */
export const CHUNK_BYTES = 64 * 1024;

type Stream = 1 | 2;

/**
 * A running job's output on its way to frames: decoded as UTF-8 per stream (a character split between two reads is
 * kept whole), what arrived in one turn of the event loop sent together, cut into chunks of at most 64 KiB, numbered
 * from 1 across both streams. Past `cap` bytes (stdout and stderr together) nothing more is sent and `onCap` is
 * called, once.
 */
export class OutputPump {
  private seq = 0;
  private total = 0;
  private pending: { stream: Stream; text: string }[] = [];
  private scheduled = false;
  private capped = false;
  private readonly decoders = { 1: new TextDecoder(), 2: new TextDecoder() };

  constructor(
    private readonly cap: number,
    private readonly send: (stream: Stream, seq: number, text: string) => void,
    private readonly onCap: () => void,
  ) {}

  write(stream: Stream, bytes: Uint8Array): void {
    const room = Math.max(0, this.cap - this.total);
    this.total += bytes.length;
    this.append(stream, this.decoders[stream].decode(bytes.subarray(0, room), { stream: true }));
    if (this.total > this.cap && !this.capped) {
      this.capped = true;
      this.onCap();
    }
  }

  /** Sends what is left, the decoders' last bytes included: the run is over. */
  end(): void {
    for (const stream of [1, 2] as const) this.append(stream, this.decoders[stream].decode());
    this.flush();
  }

  private append(stream: Stream, text: string) {
    if (!text) return;
    const last = this.pending.at(-1);
    if (last?.stream === stream) last.text += text;
    else this.pending.push({ stream, text });
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  private flush() {
    this.scheduled = false;
    for (const { stream, text } of this.pending.splice(0)) {
      for (const chunk of chunks(text)) this.send(stream, ++this.seq, chunk);
    }
  }
}

/** `text` cut into pieces of at most CHUNK_BYTES of UTF-8, never inside a character. */
export function* chunks(text: string): Generator<string> {
  const bytes = Buffer.from(text, "utf8");
  for (let start = 0; start < bytes.length;) {
    let end = Math.min(start + CHUNK_BYTES, bytes.length);
    while (end < bytes.length && (bytes[end] & 0xc0) === 0x80) end--;
    yield bytes.toString("utf8", start, end);
    start = end;
  }
}
