/**
 * The only timers tests keep besides `until()`: fixtures whose pace is itself what is tested, and bounds on what
 * may hang. Neither waits for anything; a test waits with `until()` (tests/kit/no-sleeps.test.ts checks it).
 */

/**
 * Runs `tick` every `ms` until the returned stop is called: bytes trickling in below a minimum rate, a server that
 * answers a byte at a time, a probe counting how often the event loop turns.
 */
export function every(ms: number, tick: () => void): () => void {
  const timer = setInterval(tick, ms);
  return () => clearInterval(timer);
}

/** Calls `fire` once `ms` have passed, unless the returned cancel comes first: a bound on a child process that may hang. */
export function watchdog(ms: number, fire: () => void): () => void {
  const timer = setTimeout(fire, ms);
  return () => clearTimeout(timer);
}
