import { getOption, hasOption, type DescMethod } from "@bufbuild/protobuf";
import { MethodOptions_IdempotencyLevel } from "@bufbuild/protobuf/wkt";
import { ConnectError, type Interceptor, type UnaryRequest } from "@connectrpc/connect";
import { http } from "../../../gen/google/api/annotations_pb.js";
import { problemOf, statusOf } from "./problems.js";
import { repeatable, retryAfterSeconds, retryWaitMs, type RetryPolicy } from "./retry-policy.js";

const IDEMPOTENCY_KEY_HEADER = "idempotency-key";

/**
 * Tries a unary call again by the policy (retry-policy.ts) when it may be repeated: an RPC the contract marks
 * idempotent or binds to GET, or one whose request carries an idempotency key (the `idempotency_key` field or the
 * Idempotency-Key header). Streams are never tried again: part of one may have arrived. A wait ends early, with the
 * call, when the call's deadline passes or it is cancelled.
 */
export function retries(policy: RetryPolicy): Interceptor {
  return (next) => async (req) => {
    if (req.stream || !repeatable({ idempotent: idempotent(req.method), idempotencyKey: keyed(req) })) return next(req);
    for (let tried = 1; ; tried++) {
      try {
        return await next(req);
      } catch (error) {
        const failure = ConnectError.from(error);
        const status = statusOf(failure);
        const wait =
          status === undefined ? undefined : retryWaitMs(policy, tried, status, retryAfterOf(failure), Math.random);
        if (wait === undefined) throw error;
        await pause(wait, req.signal).catch((reason: unknown) => {
          throw ConnectError.from(reason);
        });
      }
    }
  };
}

/**
 * A fetch that tries a request again by the policy when it may be repeated: GET and HEAD, or a request carrying an
 * idempotency key (the Idempotency-Key header or a JSON body's `idempotency_key`). A failure to connect counts as 503.
 */
export function retryingFetch(policy: RetryPolicy, fetchOnce: (request: Request) => Promise<Response>) {
  return async (request: Request): Promise<Response> => {
    const idempotent = request.method === "GET" || request.method === "HEAD";
    if (policy.attempts <= 1 || !repeatable({ idempotent, idempotencyKey: await keyedRequest(request) }))
      return fetchOnce(request);
    for (let tried = 1; ; tried++) {
      let response: Response;
      try {
        response = await fetchOnce(request.clone());
      } catch (error) {
        const wait = request.signal.aborted ? undefined : retryWaitMs(policy, tried, 503, undefined, Math.random);
        if (wait === undefined) throw error;
        await pause(wait, request.signal);
        continue;
      }
      const told = retryAfterSeconds(response.headers.get("retry-after"), Date.now());
      const wait = retryWaitMs(policy, tried, response.status, told, Math.random);
      if (wait === undefined) return response;
      await response.body?.cancel();
      await pause(wait, request.signal);
    }
  };
}

const idempotentMethods = new WeakMap<DescMethod, boolean>();

/** Whether the contract says calling the RPC twice does what calling it once does: declared so, or bound to GET. */
function idempotent(method: DescMethod): boolean {
  let found = idempotentMethods.get(method);
  if (found === undefined) {
    found =
      method.idempotency !== MethodOptions_IdempotencyLevel.IDEMPOTENCY_UNKNOWN ||
      (hasOption(method, http) && getOption(method, http).pattern.case === "get");
    idempotentMethods.set(method, found);
  }
  return found;
}

function keyed(req: UnaryRequest): boolean {
  if (req.header.get(IDEMPOTENCY_KEY_HEADER)) return true;
  const key = (req.message as { idempotencyKey?: unknown }).idempotencyKey;
  return typeof key === "string" && key !== "";
}

async function keyedRequest(request: Request): Promise<boolean> {
  if (request.headers.get(IDEMPOTENCY_KEY_HEADER)) return true;
  if (!request.body || !/^application\/json\b/i.test(request.headers.get("content-type") ?? "")) return false;
  try {
    const body = JSON.parse(await request.clone().text()) as { idempotency_key?: unknown } | null;
    return typeof body?.idempotency_key === "string" && body.idempotency_key !== "";
  } catch {
    return false;
  }
}

/** The wait a refusal asks for: its problem's `retry_after_seconds`, else a Retry-After header. */
function retryAfterOf(error: ConnectError): number | undefined {
  const told = problemOf(error)?.extensions?.retry_after_seconds;
  if (typeof told === "number" && told >= 0) return told;
  return retryAfterSeconds(error.metadata.get("retry-after"), Date.now());
}

/** Waits `ms`, or rejects with the signal's reason when it aborts first (the deadline passed, the call was cancelled). */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const abort = () => {
      clearTimeout(timer);
      reject(signal.reason as unknown);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", abort);
      resolve();
    }, ms);
    if (signal.aborted) abort();
    else signal.addEventListener("abort", abort, { once: true });
  });
}
