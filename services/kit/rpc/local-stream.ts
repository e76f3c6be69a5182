import { create, type DescMessage, type DescMethodStreaming, type Message } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext, type StreamRequest, type StreamResponse } from "@connectrpc/connect";

type Handler = (request: never, context: HandlerContext) => unknown;

/** Which side's read waits: the handler's of the request stream, or the caller's of the answer. */
type Side = "request" | "answer";

const over = (): Promise<IteratorResult<never>> => Promise.resolve({ done: true, value: undefined });
const ignore = () => undefined;

/**
 * One streaming call in memory, as the network's would go: its signal (the handler's and the interceptors') aborts
 * when the caller's does (Canceled), at its deadline (DeadlineExceeded) and once the call is over, however it ends;
 * a read waiting on either side then fails with that error, as a cut connection fails it, and the caller's request
 * stream is let go. Its messages pass through plain iterators, not generators, with no listener per read: an idle
 * stream (a device link) lasts for days, and each pending layer would hold its own promises for as long.
 */
export class LocalStreamCall {
  private readonly controller = new AbortController();
  readonly signal = this.controller.signal;
  private timer?: NodeJS.Timeout;
  private ended = false;
  private answered = false;
  /** The reads waiting, failed when the call is aborted. */
  private readonly waiting: Partial<Record<Side, (error: ConnectError) => void>> = {};
  private request?: AsyncIterator<unknown>;

  constructor(
    private readonly callerSignal: AbortSignal | undefined,
    timeoutMs: number | undefined,
  ) {
    if (callerSignal?.aborted) this.abort(canceled(callerSignal.reason));
    else callerSignal?.addEventListener("abort", this, { once: true });
    if (timeoutMs !== undefined && timeoutMs > 0 && !this.signal.aborted)
      this.timer = setTimeout(
        () => this.abort(new ConnectError("the operation timed out", Code.DeadlineExceeded)),
        timeoutMs,
      );
  }

  /** The caller's signal aborted (the call is its listener: no closure to hold). */
  handleEvent(): void {
    this.abort(canceled(this.callerSignal!.reason));
  }

  /** The error a read of this call fails with once it is aborted. */
  get error(): ConnectError {
    return canceled(this.signal.reason);
  }

  /** The call is over: its signal aborts (the handler's cleanup runs), its timer and listener go. */
  end(reason = new ConnectError("the call ended", Code.Canceled)): void {
    if (this.ended) return;
    this.ended = true;
    this.abort(reason);
  }

  /**
   * The call failed with `error`: over, and the error its caller gets. An aborted call's is the abort's; an error
   * that is no ConnectError is an internal one, as the network answers it.
   */
  fail(error: unknown): ConnectError {
    const failure = this.signal.aborted ? this.error : internal(error);
    this.end(failure);
    return failure;
  }

  private abort(reason: ConnectError): void {
    clearTimeout(this.timer);
    this.callerSignal?.removeEventListener("abort", this);
    if (this.signal.aborted) return;
    this.controller.abort(reason);
    const { request, answer } = this.waiting;
    request?.(this.error);
    answer?.(this.error);
    // The caller's stream is not read any more: it may let go of what it holds.
    void Promise.resolve(this.request?.return?.()).catch(ignore);
  }

  /** What `read` gives, mapped by `then`, unless the call is aborted first: its error then. One read a side at once. */
  wait<T, R = T>(side: Side, read: () => Promise<T>, then?: (value: T) => R): Promise<R> {
    if (this.signal.aborted) return Promise.reject(this.error);
    let reading: Promise<T>;
    try {
      reading = read();
    } catch (error) {
      reading = Promise.reject(error);
    }
    return new Promise<R>((resolve, reject) => {
      this.waiting[side] = reject;
      reading.then(
        (value) => {
          this.waiting[side] = undefined;
          resolve(then ? then(value) : (value as unknown as R));
        },
        (error: unknown) => {
          this.waiting[side] = undefined;
          reject(side === "answer" ? this.fail(error) : error);
        },
      );
    });
  }

  /** The caller's messages as the handler reads them: made whole, and failing once the call is aborted. */
  requests(desc: DescMessage, input: AsyncIterable<unknown>): AsyncIterable<Message> {
    return { [Symbol.asyncIterator]: () => (this.request = new RequestReader(this, desc, input)) };
  }

  /**
   * The answer's messages as the caller reads them: a read fails once the call is aborted (`fail`). The call is over
   * at the end, at an error, or once the caller stops reading (`return`, which also ends the handler's stream).
   */
  responses(messages: AsyncIterable<Message>): AsyncIterable<Message> {
    const reader = new AnswerReader(this, messages[Symbol.asyncIterator]());
    return { [Symbol.asyncIterator]: () => reader };
  }

  /** The caller read the answer's end, or stopped reading it: the call is over. */
  answeredNow(): void {
    this.answered = true;
    this.end();
  }

  get isAnswered(): boolean {
    return this.answered;
  }
}

/** The handler's reads of the caller's stream (classes, not closures: each idle stream holds one of each). */
class RequestReader implements AsyncIterator<Message> {
  private readonly iterator: AsyncIterator<unknown>;

  constructor(
    private readonly call: LocalStreamCall,
    private readonly desc: DescMessage,
    input: AsyncIterable<unknown>,
  ) {
    this.iterator = input[Symbol.asyncIterator]();
  }

  next(): Promise<IteratorResult<Message>> {
    return this.call.wait(
      "request",
      () => this.iterator.next(),
      (result) => made(this.desc, result),
    );
  }

  return(value?: unknown): Promise<IteratorResult<Message>> {
    void Promise.resolve(this.iterator.return?.(value)).catch(ignore);
    return over();
  }
}

/** The caller's reads of the answer. */
class AnswerReader implements AsyncIterator<Message> {
  constructor(
    private readonly call: LocalStreamCall,
    private readonly iterator: AsyncIterator<Message>,
  ) {}

  next(): Promise<IteratorResult<Message>> {
    if (this.call.isAnswered) return over();
    return this.call.wait(
      "answer",
      () => this.iterator.next(),
      (result) => {
        if (result.done) this.call.answeredNow();
        return result;
      },
    );
  }

  return(value?: unknown): Promise<IteratorResult<Message>> {
    this.call.answeredNow();
    void Promise.resolve(this.iterator.return?.(value)).catch(ignore);
    return over();
  }
}

/**
 * The innermost step of a streaming call's interceptors: the handler, given its request as its kind takes it (one
 * message, or the stream of them), and its answer as a stream of whole messages. As Connect's server does, a
 * server stream's single request and a client stream's single answer are awaited here, inside the interceptors.
 */
export function invokeStream(
  method: DescMethodStreaming,
  handler: Handler,
  context: (req: StreamRequest) => HandlerContext,
) {
  return async (req: StreamRequest): Promise<StreamResponse> => {
    const ctx = context(req);
    let output: AsyncIterable<unknown>;
    switch (method.methodKind) {
      case "server_streaming":
        output = handler((await single(req.message)) as never, ctx) as AsyncIterable<unknown>;
        break;
      case "client_streaming":
        output = one(await (handler(req.message as never, ctx) as Promise<unknown>));
        break;
      case "bidi_streaming":
        output = handler(req.message as never, ctx) as AsyncIterable<unknown>;
        break;
    }
    return {
      stream: true,
      service: req.service,
      method,
      header: ctx.responseHeader,
      trailer: ctx.responseTrailer,
      message: whole(method.output, output),
    };
  };
}

/** The handler's answer as whole messages of the output type; stopping it stops the handler's stream. */
function whole(desc: DescMessage, messages: AsyncIterable<unknown>): AsyncIterable<Message> {
  return { [Symbol.asyncIterator]: () => new Whole(desc, messages[Symbol.asyncIterator]()) };
}

class Whole implements AsyncIterator<Message> {
  constructor(
    private readonly desc: DescMessage,
    private readonly iterator: AsyncIterator<unknown>,
  ) {}

  next(): Promise<IteratorResult<Message>> {
    return this.iterator.next().then((result) => made(this.desc, result));
  }

  return(value?: unknown): Promise<IteratorResult<Message>> {
    return this.iterator.return ? this.iterator.return(value).then((result) => made(this.desc, result)) : over();
  }
}

function made(desc: DescMessage, result: IteratorResult<unknown>): IteratorResult<Message> {
  return result.done ? result : { done: false, value: create(desc, result.value as never) };
}

async function* one<T>(message: T): AsyncGenerator<T> {
  yield message;
}

/** The one request of a server stream, as Connect's server reads it. */
async function single<T>(messages: AsyncIterable<T>): Promise<T> {
  const iterator = messages[Symbol.asyncIterator]();
  const first = await iterator.next();
  if (first.done) throw new ConnectError("protocol error: missing input message", Code.Unimplemented);
  const second = await iterator.next();
  if (!second.done) throw new ConnectError("protocol error: received extra input message", Code.Unimplemented);
  return first.value;
}

/** What an aborted call's reads fail with: the reason when it is a ConnectError (a deadline), else Canceled. */
function canceled(reason: unknown): ConnectError {
  return ConnectError.from(reason, Code.Canceled);
}

/** A failure that is no ConnectError, as the network answers it: internal, its cause kept for the logs. */
function internal(error: unknown): ConnectError {
  return error instanceof ConnectError
    ? error
    : new ConnectError("internal error", Code.Internal, undefined, undefined, error);
}
