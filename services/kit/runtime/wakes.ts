/**
 * Waking waiters within one process (an open event stream, a run waiting for its job): who watches which key, and
 * one waiter's wait for its next wake. Not durable and not across processes: a waiter also looks again on its own
 * every so often (`next(timeoutMs)`), which is all a change made elsewhere gets.
 */

/** The waiters of each key (a job id): `tell(key)` wakes every one of them. */
export class Listeners {
  private readonly byKey = new Map<string, Set<() => void>>();

  /** Calls `wake` after each `tell` of the key, until the answer is called. */
  watch(key: string, wake: () => void): () => void {
    let own = this.byKey.get(key);
    if (!own) this.byKey.set(key, (own = new Set()));
    own.add(wake);
    return () => {
      own.delete(wake);
      if (own.size === 0 && this.byKey.get(key) === own) this.byKey.delete(key);
    };
  }

  /** Something about the key changed (its commit is done). */
  tell(key: string): void {
    for (const wake of this.byKey.get(key) ?? []) wake();
  }
}

/**
 * One waiter's wait for news: `next` resolves at the next wake (at once if one came since the last `next`), after
 * `timeoutMs`, or when `signal` aborts (its client went away).
 */
export class Wakes {
  private woken = false;
  private resolve?: () => void;

  constructor(private readonly signal?: AbortSignal) {}

  /** Something may have happened: the waiting `next` returns. */
  readonly wake = (): void => {
    this.woken = true;
    this.resolve?.();
  };

  async next(timeoutMs: number): Promise<void> {
    if (!this.woken && !this.signal?.aborted) {
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.signal?.removeEventListener("abort", done);
          this.resolve = undefined;
          resolve();
        };
        const timer = setTimeout(done, timeoutMs);
        this.signal?.addEventListener("abort", done, { once: true });
        this.resolve = done;
      });
    }
    this.woken = false;
  }
}
