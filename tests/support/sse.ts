import { until } from "./until.js";

/** One server-sent event as a client sees it. */
export interface SentEvent {
  id?: string;
  event: string;
  // Test bodies are read field by field.

  data: any;
}

/**
 * An open text/event-stream read over real HTTP: events as they arrive,
 * comment lines counted apart, and whether the server ended the stream.
 */
export class EventStreamReader {
  readonly comments: string[] = [];
  ended = false;
  private buffer = "";
  private readonly events: SentEvent[] = [];
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private readonly decoder = new TextDecoder();

  constructor(readonly response: Response) {
    this.reader = response.body!.getReader();
    void this.pump();
  }

  private async pump(): Promise<void> {
    try {
      for (;;) {
        const { done, value } = await this.reader.read();
        if (done) break;
        this.buffer += this.decoder.decode(value, { stream: true });
        let end: number;
        while ((end = this.buffer.indexOf("\n\n")) !== -1) {
          this.parse(this.buffer.slice(0, end));
          this.buffer = this.buffer.slice(end + 2);
        }
      }
    } catch {
      // Cancelled by close(), or the connection dropped: either way the stream ended.
    }
    this.ended = true;
  }

  private parse(block: string): void {
    const event: Partial<SentEvent> & { event: string } = { event: "message" };
    let data: string | undefined;
    for (const line of block.split("\n")) {
      if (line.startsWith(":")) {
        this.comments.push(line.slice(1).trim());
        continue;
      }
      const colon = line.indexOf(":");
      const field = line.slice(0, colon);
      const value = line.slice(colon + 1).replace(/^ /, "");
      if (field === "id") event.id = value;
      else if (field === "event") event.event = value;
      else if (field === "data") data = data === undefined ? value : `${data}\n${value}`;
    }
    if (data !== undefined) this.events.push({ ...event, data: JSON.parse(data) } as SentEvent);
  }

  /** The next event, or undefined when the stream ends first; fails after `timeoutMs`. */
  async next(timeoutMs = 5000): Promise<SentEvent | undefined> {
    await until(() => this.events.length > 0 || this.ended, timeoutMs).catch(() => {
      throw new Error("no event within the time limit");
    });
    return this.events.shift();
  }

  /** Resolves once the server ended the stream; fails after `timeoutMs`. */
  async end(timeoutMs = 5000): Promise<void> {
    await until(() => this.ended, timeoutMs).catch(() => {
      throw new Error("the stream did not end within the time limit");
    });
  }

  async close(): Promise<void> {
    await this.reader.cancel().catch(() => undefined);
  }
}

/** An opened stream, or the problem+json it was refused with. */
export type Opened = { status: number; headers: Headers; stream?: EventStreamReader; problem?: any };

/** Opens an event stream with fetch: a 200 answer is read as events, any other as its problem. */
export async function openEventStream(url: string, headers: Record<string, string> = {}): Promise<Opened> {
  const response = await fetch(url, { headers: { accept: "text/event-stream", ...headers } });
  if (response.status !== 200)
    return { status: response.status, headers: response.headers, problem: await response.json() };
  return { status: 200, headers: response.headers, stream: new EventStreamReader(response) };
}
