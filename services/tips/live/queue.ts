/**
 * Events pushed by a listener, read in order by one async iteration; it ends
 * when the signal aborts (the overlay went away), so the stream's `finally`
 * stops listening.
 */
export class EventQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private wake?: () => void;
  private ended = false;

  constructor(signal: AbortSignal) {
    if (signal.aborted) this.ended = true;
    else signal.addEventListener("abort", () => this.end(), { once: true });
  }

  push(item: T): void {
    if (this.ended) return;
    this.items.push(item);
    this.wake?.();
  }

  private end(): void {
    this.ended = true;
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (;;) {
      const item = this.items.shift();
      if (item !== undefined) {
        yield item;
        continue;
      }
      if (this.ended) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }
}
