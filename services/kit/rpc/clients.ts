import { getOption, type DescService } from "@bufbuild/protobuf";
import { createClient, type CallOptions, type Client, type Interceptor, type Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { service_key as serviceKey } from "../../../gen/pf/v1/options_pb.js";
import { currentCall } from "../runtime/call.js";

const keys = new WeakMap<DescService, string>();

/** The service key a proto service belongs to (its pf.v1.service_key option), read once: getOption decodes it each time. */
export function keyOf(service: DescService): string {
  let key = keys.get(service);
  if (key === undefined) {
    key = getOption(service, serviceKey);
    if (!key) throw new Error(`${service.typeName} declares no pf.v1.service_key`);
    keys.set(service, key);
  }
  return key;
}

/** Adds a bearer token to every call that does not carry one already. */
export function bearer(token: () => Promise<string>): Interceptor {
  return (next) => async (req) => {
    if (!req.header.has("authorization")) req.header.set("authorization", `Bearer ${await token()}`);
    return next(req);
  };
}

/**
 * Transports of one caller: gRPC (HTTP/2) to PF_<SERVICE>_URL for a service
 * this process does not run, otherwise the in-memory `local` transport, which
 * runs the same handlers and interceptors without a socket.
 */
export class Transports {
  private readonly remote = new Map<string, Transport>();

  constructor(
    private readonly local: Transport,
    private readonly localKeys: ReadonlySet<string>,
    private readonly urls: Record<string, string>,
    private readonly interceptors: Interceptor[],
  ) {}

  for(key: string): Transport {
    const url = this.urls[key];
    if (!url || this.localKeys.has(key)) return this.local;
    let transport = this.remote.get(key);
    if (!transport) {
      transport = createGrpcTransport({ baseUrl: url, interceptors: this.interceptors });
      this.remote.set(key, transport);
    }
    return transport;
  }
}

/**
 * A typed client whose calls take these options (a deadline, headers) unless the caller gives its own. A call
 * made while serving another ends before that one's deadline (`withinCaller`).
 */
export function clientWithDefaults<S extends DescService>(
  service: S,
  transport: Transport,
  defaults: CallOptions,
): Client<S> {
  const client = createClient(service, transport);
  return new Proxy(client, {
    get(target, property) {
      const method = Reflect.get(target, property) as unknown;
      if (typeof method !== "function") return method;
      return (request: unknown, options?: CallOptions) =>
        method.call(target, request, withinCaller(withDefaults(defaults, options)));
    },
  });
}

/** The caller's options over the defaults; headers are merged, the caller's winning. */
function withDefaults(defaults: CallOptions, options: CallOptions | undefined): CallOptions {
  if (!options) return defaults;
  if (!defaults.headers || !options.headers) return { ...defaults, ...options };
  const headers = new Headers(defaults.headers);
  new Headers(options.headers).forEach((value, name) => headers.set(name, value));
  return { ...defaults, ...options, headers };
}

/** Time kept back from the caller's deadline: a quarter of what is left, at most this. */
const ANSWER_MARGIN_MS = 500;

/**
 * A call to another service made while serving one gives up before the served call's own deadline, so that the
 * caller can still record and answer what it knows ("not answered yet, retry with the same key") instead of
 * running out of time itself and answering 504.
 */
function withinCaller(options: CallOptions): CallOptions {
  const call = currentCall();
  if (!call) return options;
  const left = call.deadline - Date.now();
  const budget = Math.max(1, Math.floor(left - Math.min(ANSWER_MARGIN_MS, left / 4)));
  return options.timeoutMs !== undefined && options.timeoutMs <= budget ? options : { ...options, timeoutMs: budget };
}

/** One transport for the services of every process: each call goes by its service's key (`Transports.for`). */
export function routedTransport(transports: Transports): Transport {
  return {
    unary: (method, ...rest) => transports.for(keyOf(method.parent)).unary(method, ...rest),
    stream: (method, ...rest) => transports.for(keyOf(method.parent)).stream(method, ...rest),
  };
}
