/**
 * What tells this process's watchers of a job (an open event stream, a run waiting for its job, the executor
 * running it) that the job changed: each writer tells the job's id after its commit, and each watcher reads
 * the job again. Not durable and not across processes: watchers also read again on their own every so often,
 * which is all a change made by another instance gets.
 */
export class JobNews {
  private readonly watchers = new Map<string, Set<() => void>>();

  /** Calls `wake` after each change of the job told here, until the answer is called. */
  watch(jobId: string, wake: () => void): () => void {
    let own = this.watchers.get(jobId);
    if (!own) this.watchers.set(jobId, (own = new Set()));
    own.add(wake);
    return () => {
      own.delete(wake);
      if (own.size === 0 && this.watchers.get(jobId) === own) this.watchers.delete(jobId);
    };
  }

  /** The job changed (its commit is done). */
  tell(jobId: string): void {
    for (const wake of this.watchers.get(jobId) ?? []) wake();
  }
}

/**
 * One waiter's wait for news: `next` resolves at the next wake (at once if one came since the last `next`), after
 * `timeoutMs`, or when `signal` aborts.
 */
export class Wakes {
  private woken = false;
  private resolve?: () => void;

  constructor(private readonly signal?: AbortSignal) {}

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
