import { Code, ConnectError, createContextKey, type Interceptor } from "@connectrpc/connect";
import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";
import { ProblemSchema } from "../../../gen/pf/v1/problem_pb.js";
import { outsideSpan } from "./tracing.js";

const REQUEST_ID = "x-request-id";
const TOKEN_LIKE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A request id a client sent, when it is a bounded token-like value (kept in logs and answers); else a new one. */
export function acceptedRequestId(sent: string | null | undefined): string {
  return typeof sent === "string" && TOKEN_LIKE_ID.test(sent) ? sent : randomUUID();
}

/**
 * The call being served: its request id (on every log line, carried into the
 * calls it makes) and its deadline, which decides whether its writes may commit.
 */
export interface Call {
  readonly requestId: string;
  /** When the caller stops waiting (ms since the epoch). */
  readonly deadline: number;
  /**
   * running → committing → committed, or running → expired. A call that
   * expired never commits; one that committed is answered even if late.
   */
  state: "running" | "committing" | "committed" | "expired";
  /** The call this one was made from, in this process: its deadline bounds this one, its commit is this one's too. */
  readonly parent?: Call;
}

const scope = new AsyncLocalStorage<Call>();

/** The signal of a call nobody can cancel (in memory, without a caller's signal): nothing to listen to. */
export const neverAborted = new AbortController().signal;

/** The deadline of an in-memory call: the transport's, then the call scope's own (with its default and parent's). */
export const deadlineKey = createContextKey<number | undefined>(undefined, { description: "pf call deadline" });

/** Runs `work` outside any call (background work a call merely woke up), and outside its trace. */
export function outsideCall<T>(work: () => T): T {
  return scope.exit(() => outsideSpan(work));
}

export function currentCall(): Call | undefined {
  return scope.getStore();
}

export function currentRequestId(): string | undefined {
  return scope.getStore()?.requestId;
}

/**
 * Server side: serves the call in its scope, and fails it as DEADLINE_EXCEEDED
 * when its deadline passes first. A call with no deadline of its own gets
 * `defaultTimeoutMs`; one made from another call in process never outlives it.
 */
export function callScope(defaultTimeoutMs: number): Interceptor {
  return (next) => (req) => {
    const requestId = acceptedRequestId(req.header.get(REQUEST_ID));
    req.header.set(REQUEST_ID, requestId);
    const parent = scope.getStore();
    const own = req.contextValues.get(deadlineKey) ?? deadlineOfHeaders(req.header) ?? Date.now() + defaultTimeoutMs;
    const deadline = parent ? Math.min(own, parent.deadline) : own;
    // What the handler's `timeoutMs()` reads on the in-memory transport (waitWithinDeadline).
    req.contextValues.set(deadlineKey, deadline);
    const call: Call = { requestId, deadline, state: "running", parent };
    // Over the network Connect aborts the request at its deadline, or when the client goes away.
    const signal = req.signal;
    const onAbort = () => expire(call);
    if (signal !== neverAborted) signal.addEventListener("abort", onAbort, { once: true });
    let served = scope.run(call, () => next(req));
    if (signal !== neverAborted) served = served.finally(() => signal.removeEventListener("abort", onAbort));
    return deadlines.track(served, call);
  };
}

/** Client side: a call made while serving another carries its request id; a call past its deadline makes no more. */
export function propagateCall(): Interceptor {
  return (next) => async (req) => {
    const call = scope.getStore();
    if (call?.state === "expired") throw exceeded();
    if (call && !req.header.has(REQUEST_ID)) req.header.set(REQUEST_ID, call.requestId);
    return next(req);
  };
}

/**
 * Runs `commit` unless the call's deadline passed first (then DEADLINE_EXCEEDED,
 * and the transaction rolls back); while it runs, the deadline waits for it.
 */
export async function commitWithin<T>(commit: () => Promise<T>): Promise<T> {
  const call = scope.getStore();
  if (!call) return commit();
  if (expiredNow(call)) throw exceeded();
  const before = call.state;
  call.state = "committing";
  try {
    const result = await commit();
    commitEnded(call, true);
    return result;
  } finally {
    if (call.state === "committing") call.state = before;
  }
}

/** Whether the call's caller has stopped waiting: it expired, or its deadline passed while it ran (it expires now). */
export function expiredNow(call: Call): boolean {
  if (call.state === "running" && Date.now() > call.deadline) expire(call);
  return call.state === "expired";
}

/**
 * The end of a commit the call's writes were part of (work posted for many calls at once: `commitWithin` for
 * one): committed, it and the calls it was made from are answered even if late; otherwise it runs on.
 */
export function commitEnded(call: Call, committed: boolean): void {
  if (call.state !== "committing") return;
  if (!committed) call.state = "running";
  // What committed here is the outer calls' doing too: none of them may be answered "deadline exceeded" now.
  else for (let c: Call | undefined = call; c; c = c.parent) if (c.state !== "expired") c.state = "committed";
}

function expire(call: Call): boolean {
  if (call.state !== "running") return false;
  call.state = "expired";
  return true;
}

/** The error of a call whose deadline passed. */
export function exceeded(): ConnectError {
  return new ConnectError("the call's deadline passed", Code.DeadlineExceeded);
}

/** grpc-timeout (`10S`, `500m`…) or connect-timeout-ms, as a deadline. */
function deadlineOfHeaders(header: Headers): number | undefined {
  const connect = header.get("connect-timeout-ms");
  if (connect !== null && /^\d{1,10}$/.test(connect)) return Date.now() + Number(connect);
  const grpc = /^(\d{1,8})([HMSmun])$/.exec(header.get("grpc-timeout") ?? "");
  if (!grpc) return undefined;
  const unitMs = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 0.001, n: 0.000001 }[grpc[2] as "H"];
  return Date.now() + Number(grpc[1]) * unitMs;
}

/** How often running calls are checked against their deadline. */
const SWEEP_MS = 50;

/** Deadlines without a timer per call: one sweep fails the calls whose deadline passed while they still ran. */
class Deadlines {
  private readonly running = new Map<Call, (error: ConnectError) => void>();
  private sweeper?: NodeJS.Timeout;

  track<T>(served: Promise<T>, call: Call): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.running.set(call, reject);
      this.sweeper ??= setInterval(() => this.sweep(), SWEEP_MS).unref();
      served.then(
        (value) => {
          this.running.delete(call);
          // An answer that came late but committed nothing is still late; one that committed is the truth.
          if (call.state !== "committed" && Date.now() > call.deadline) {
            expire(call);
            reject(exceeded());
          } else resolve(value);
        },
        (error: unknown) => {
          this.running.delete(call);
          reject(error);
        },
      );
    });
  }

  private sweep(): void {
    const now = Date.now();
    for (const [call, fail] of this.running) {
      if (call.deadline > now || !expire(call)) continue;
      this.running.delete(call);
      fail(exceeded());
    }
    if (this.running.size === 0) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
  }
}

const deadlines = new Deadlines();

/**
 * Statuses of a callee's problem that say nothing of the request itself: the
 * caller's own credentials refused (401, 403: a configuration to fix), a
 * timeout (408), a rate limit (429), a cancelled call (499).
 */
const NOT_A_DECISION = new Set([401, 403, 408, 429, 499]);

/**
 * A failed call to another service that it did not answer: only a problem the
 * callee raised itself (a pf.v1.Problem detail) is its decision, so any error
 * without one (a connection reset the transport reports as Aborted, a
 * cancellation, Unknown, a timeout, unreachable) was not answered, nor was a
 * 5xx or a refusal of the caller's own credentials or rate. What the callee
 * did may be unknown: retry with the same idempotency key, never report a
 * refusal. Anything not a ConnectError is a failure of this service, not of the callee.
 */
export function notAnswered(error: unknown): boolean {
  if (!(error instanceof ConnectError)) return false;
  const [found] = error.findDetails(ProblemSchema);
  return !found || found.status >= 500 || NOT_A_DECISION.has(found.status);
}

/** The caller's own credentials refused by the callee: a configuration to fix, logged loudly. */
export function callerRefused(error: unknown): boolean {
  if (!(error instanceof ConnectError)) return false;
  const [found] = error.findDetails(ProblemSchema);
  return found?.status === 401 || found?.status === 403;
}
