import { neverAborted } from "./call.js";

/**
 * Waking waiters within one process (an open event stream, a run waiting for its job): who watches which key, and
 * one waiter's wait for its next wake. Not durable and not across processes: a waiter also looks again on its own
 * every so often (`next(timeoutMs)`), which is all a change made elsewhere gets.
 */

/**
 * The waiters of each key (a job id): `tell(key, news)` wakes every one of them, handing them what happened where
 * the teller has it (run's streams get the stream events committed; a bare wake says only "read again").
 */
export class Listeners<News = void> {
  private readonly byKey = new Map<string, Set<(news: News) => void>>();

  /** Calls `wake` after each `tell` of the key, until the answer is called. */
  watch(key: string, wake: (news: News) => void): () => void {
    let own = this.byKey.get(key);
    if (!own) this.byKey.set(key, (own = new Set()));
    own.add(wake);
    return () => {
      own.delete(wake);
      if (own.size === 0 && this.byKey.get(key) === own) this.byKey.delete(key);
    };
  }

  /** Something about the key changed (its commit is done). */
  tell(key: string, news: News): void {
    for (const wake of this.byKey.get(key) ?? []) wake(news);
  }
}

/**
 * One waiter's wait for news: `next` resolves at the next wake (at once if one came since the last `next`), after
 * `timeoutMs`, or when `signal` aborts (its client went away).
 */
export class Wakes {
  private woken = false;
  private resolve?: () => void;
  private readonly signal?: AbortSignal;

  constructor(signal?: AbortSignal) {
    // An in-memory call without a caller's signal has the shared one that never aborts: nothing to listen to (every
    // waiter's listener on it had passed Node's count of 10 with 50 waiting).
    this.signal = signal === neverAborted ? undefined : signal;
  }

  /** Something may have happened: the waiting `next` returns. */
  readonly wake = (): void => {
    this.woken = true;
    this.resolve?.();
  };

  /** Whether it was woken (not only timed out or aborted). */
  async next(timeoutMs: number): Promise<boolean> {
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
    const woken = this.woken;
    this.woken = false;
    return woken;
  }
}

/** What `awaitEnd` watches: a row read afresh each time, and whether it has ended. */
export interface Ending<T> {
  /** The key its changes are told under (`Listeners.tell`). */
  key: string;
  read(): Promise<T>;
  ended(value: T): boolean;
  /** How often it is read again untold: what another instance changed reaches the waiter this late at most. */
  recheckMs: number;
}

/**
 * Waits for something to end (a job, a run): answers it once it has, or as it stands when `ms` passed or `signal`
 * aborted. Woken at once by this process's news of its key, and reading it again every `recheckMs` otherwise.
 */
export async function awaitEnd<T>(news: Listeners, awaited: Ending<T>, ms: number, signal?: AbortSignal): Promise<T> {
  const until = Date.now() + ms;
  const wakes = new Wakes(signal);
  // Listening before the first read: a change committed between the read and the wait still wakes it.
  const stop = news.watch(awaited.key, wakes.wake);
  try {
    for (;;) {
      const value = await awaited.read();
      const left = until - Date.now();
      if (awaited.ended(value) || left <= 0 || signal?.aborted) return value;
      await wakes.next(Math.min(left, awaited.recheckMs));
    }
  } finally {
    stop();
  }
}
