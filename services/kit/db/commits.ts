import type { EntityManager } from "@mikro-orm/postgresql";

/**
 * What a transaction wrote that a relay carries elsewhere once it commits: events for the outbox relay, search
 * documents for the search relay, jobs (and cancels) for run's placement, worker commands for restream's command
 * streams. The writer marks its transaction; the service's `transaction` tells the listeners after the commit, so a
 * relay leaves at once instead of at its next poll (the poll stays the fallback).
 */
export type CommitSignal = "events" | "search-documents" | "jobs" | "worker-commands";

const marked = new WeakMap<EntityManager, Set<CommitSignal>>();

/** Marks `em`'s transaction as having written `signal`'s rows: its commit wakes that relay. */
export function signalAfterCommit(em: EntityManager, signal: CommitSignal): void {
  let signals = marked.get(em);
  if (!signals) marked.set(em, (signals = new Set()));
  signals.add(signal);
}

const callbacks = new WeakMap<EntityManager, (() => void)[]>();

/**
 * Runs `wake` once `em`'s transaction has committed (never if it rolls back): an in-process wake of what waits for
 * the rows it wrote on this instance (other instances hear the transaction's events). A savepoint rolled back
 * keeps its wakes: a wake is a hint to read again, never the news itself.
 */
export function wakeAfterCommit(em: EntityManager, wake: () => void): void {
  const list = callbacks.get(em);
  if (list) list.push(wake);
  else callbacks.set(em, [wake]);
}

/** The wakes `em`'s transaction asked for. */
export function wakesOf(em: EntityManager): readonly (() => void)[] {
  return callbacks.get(em) ?? [];
}

/** What `em`'s transaction marked. */
export function signalsOf(em: EntityManager): ReadonlySet<CommitSignal> {
  return marked.get(em) ?? new Set();
}

/** Told a commit that marked its signal: the committed transaction's `em`, to read what it wrote (no statement). */
type CommitListener = (em: EntityManager) => void;

/** A service's listeners for its own commits, one list per signal (`ServiceContext.commits`). */
export class CommitListeners {
  private readonly listeners = new Map<CommitSignal, CommitListener[]>();

  /** Calls `listener` after every commit that marked `signal`; answers how to stop. */
  on(signal: CommitSignal, listener: CommitListener): () => void {
    const list = this.listeners.get(signal) ?? [];
    this.listeners.set(signal, [...list, listener]);
    return () =>
      this.listeners.set(
        signal,
        (this.listeners.get(signal) ?? []).filter((l) => l !== listener),
      );
  }

  /** Tells the listeners of each signal `em`'s transaction marked; called after it committed. */
  committed(em: EntityManager): void {
    for (const signal of signalsOf(em)) for (const listener of this.listeners.get(signal) ?? []) listener(em);
  }
}

const beforeCommit = new WeakMap<EntityManager, (() => Promise<void>)[]>();

/**
 * Whether `em` is a transaction of `inTransaction`, whose writes before commit run (`writeBeforeCommit`): only there
 * may a write wait for the commit.
 */
export function commitsLater(em: EntityManager): boolean {
  return beforeCommit.has(em);
}

/** Runs `write` in `em`'s transaction just before it commits (after the unit of work's flush): `commitsLater` only. */
export function writeBeforeCommit(em: EntityManager, write: () => Promise<void>): void {
  const writes = beforeCommit.get(em);
  if (!writes) throw new Error("writeBeforeCommit needs a transaction of inTransaction");
  writes.push(write);
}

/** Opens `em`'s list of writes before commit (`inTransaction`, as its transaction begins). */
export function openWritesBeforeCommit(em: EntityManager): void {
  beforeCommit.set(em, []);
}

/** Runs the writes `em`'s transaction left for its commit, in the order they were asked. */
export async function writtenBeforeCommit(em: EntityManager): Promise<void> {
  const writes = beforeCommit.get(em) ?? [];
  for (let write = writes.shift(); write; write = writes.shift()) await write();
}
