import { create, type DescMessage, type DescMethod, type MessageShape } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createContextValues,
  type HandlerContext,
  type Interceptor,
  type ContextValues,
  type Transport,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import { deadlineKey, neverAborted } from "../runtime/call.js";
import type { Implementation } from "./implementation.js";
import { PlainHeaders } from "./plain-headers.js";

type UnaryHandler = (request: MessageShape<DescMessage>, context: HandlerContext) => Promise<unknown> | unknown;

interface LocalMethod {
  handler: UnaryHandler;
  interceptors: Interceptor[];
}

/**
 * The services this process hosts, callable in memory. Unary calls run the
 * same server interceptors and handlers as a call over the network, without
 * encoding, HTTP framing, header validation or per-call abort controllers: the
 * Connect router transport costs ~80 µs a call, this a few. The deadline goes
 * to the call scope (see `callScope`). Streaming calls go to `streaming()`.
 */
export class LocalServices {
  private readonly methods = new Map<DescMethod, LocalMethod>();

  add({ service, impl }: Implementation, interceptors: Interceptor[]): void {
    for (const method of service.methods) {
      const handler = (impl as Record<string, UnaryHandler | undefined>)[method.localName];
      if (method.methodKind === "unary" && handler)
        this.methods.set(method, { handler: handler.bind(impl), interceptors });
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
        if (!local)
          throw new ConnectError(`${method.parent.typeName}/${method.name} is not hosted here`, Code.Unimplemented);
        const interceptors = [...clientInterceptors, ...local.interceptors];
        chain = interceptors.reduceRight<Next>(
          (next, interceptor) => interceptor(next),
          invoke(local.handler) as Next,
        ) as Call;
        chains.set(method, chain);
      }
      return chain;
    };
    return {
      async unary(method, signal, timeoutMs, header, input, contextValues) {
        const request: UnaryRequest = {
          stream: false,
          service: method.parent,
          method,
          requestMethod: "POST",
          url: `local:///${method.parent.typeName}/${method.name}`,
          signal: signal ?? neverAborted,
          header: new PlainHeaders(header),
          contextValues: withDeadline(contextValues ?? createContextValues(), timeoutMs),
          message: create(method.input, input),
        };
        return chainFor(method)(request) as never;
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

/** The call's deadline, for the call scope to enforce (interceptors see no timeout of their own). */
function withDeadline(values: ContextValues, timeoutMs: number | undefined): ContextValues {
  return timeoutMs ? values.set(deadlineKey, Date.now() + timeoutMs) : values;
}
