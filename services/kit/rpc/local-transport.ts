import { create, type DescMessage, type DescMethod, type MessageShape } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createContextValues,
  type HandlerContext,
  type Interceptor,
  type Transport,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import type { Implementation } from "../module.js";
import { PlainHeaders } from "./plain-headers.js";

type UnaryHandler = (request: MessageShape<DescMessage>, context: HandlerContext) => Promise<unknown> | unknown;

interface LocalMethod {
  handler: UnaryHandler;
  interceptors: Interceptor[];
}

const NEVER = new AbortController().signal;

/**
 * The services this process hosts, callable in memory. Unary calls run the
 * same server interceptors and handlers as a call over the network, without
 * encoding, HTTP framing, header validation or per-call abort controllers: the
 * Connect router transport costs ~80 µs a call, this a few. Streaming calls go
 * to `streaming()`.
 */
export class LocalServices {
  private readonly methods = new Map<DescMethod, LocalMethod>();
  private readonly deadlines = new Deadlines();

  add({ service, impl }: Implementation, interceptors: Interceptor[]): void {
    for (const method of service.methods) {
      const handler = (impl as Record<string, UnaryHandler | undefined>)[method.localName];
      if (method.methodKind === "unary" && handler) this.methods.set(method, { handler: handler.bind(impl), interceptors });
    }
  }

  /** A transport whose calls pass the caller's interceptors, then the service's, then reach the handler. */
  transport(clientInterceptors: Interceptor[], streaming: () => Transport): Transport {
    type Call = (req: UnaryRequest) => Promise<UnaryResponse>;
    type Next = Parameters<Interceptor>[0];
    const chains = new Map<DescMethod, Call>();
    const chainFor = (method: DescMethod): Call => {
      let chain = chains.get(method);
      if (!chain) {
        const local = this.methods.get(method);
        if (!local) throw new ConnectError(`${method.parent.typeName}/${method.name} is not hosted here`, Code.Unimplemented);
        const interceptors = [...clientInterceptors, ...local.interceptors];
        chain = interceptors.reduceRight<Next>((next, interceptor) => interceptor(next), invoke(local.handler) as Next) as Call;
        chains.set(method, chain);
      }
      return chain;
    };
    const deadlines = this.deadlines;
    return {
      async unary(method, signal, timeoutMs, header, input, contextValues) {
        const request: UnaryRequest = {
          stream: false,
          service: method.parent,
          method,
          requestMethod: "POST",
          url: `local:///${method.parent.typeName}/${method.name}`,
          signal: signal ?? NEVER,
          header: new PlainHeaders(header),
          contextValues: contextValues ?? createContextValues(),
          message: create(method.input, input),
        };
        const call = chainFor(method)(request);
        return (timeoutMs ? deadlines.track(call, timeoutMs) : call) as never;
      },
      stream: (...args) => streaming().stream(...args),
    };
  }
}

function invoke(handler: UnaryHandler) {
  return async (req: UnaryRequest): Promise<UnaryResponse> => {
    const responseHeader = new PlainHeaders();
    const responseTrailer = new PlainHeaders();
    const context: HandlerContext = {
      service: req.service,
      method: req.method,
      protocolName: "local",
      requestMethod: req.requestMethod,
      url: req.url,
      signal: req.signal,
      timeoutMs: () => undefined,
      requestHeader: req.header,
      responseHeader,
      responseTrailer,
      values: req.contextValues,
    };
    const output = await handler(req.message as MessageShape<DescMessage>, context);
    return {
      stream: false,
      service: req.service,
      method: req.method,
      header: responseHeader,
      trailer: responseTrailer,
      message: create(req.method.output, output as never),
    };
  };
}

/** How often calls still running are checked against their deadline. */
const SWEEP_MS = 50;

/**
 * Deadlines of in-memory calls without a timer each: a call answering after its
 * deadline fails as DEADLINE_EXCEEDED on completion, and one sweep timer fails
 * calls that never answer.
 */
class Deadlines {
  private readonly running = new Set<{ at: number; fail: (error: ConnectError) => void }>();
  private sweeper?: NodeJS.Timeout;

  track<T>(call: Promise<T>, timeoutMs: number): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const entry = { at: Date.now() + timeoutMs, fail: reject };
      this.running.add(entry);
      this.sweeper ??= setInterval(() => this.sweep(), SWEEP_MS).unref();
      call.then(
        (value) => {
          this.running.delete(entry);
          if (Date.now() > entry.at) reject(exceeded());
          else resolve(value);
        },
        (error: unknown) => {
          this.running.delete(entry);
          reject(error);
        },
      );
    });
  }

  private sweep(): void {
    const now = Date.now();
    for (const entry of this.running) {
      if (entry.at > now) continue;
      this.running.delete(entry);
      entry.fail(exceeded());
    }
    if (this.running.size === 0) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
  }
}

function exceeded(): ConnectError {
  return new ConnectError("the call's deadline passed", Code.DeadlineExceeded);
}
