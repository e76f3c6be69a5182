import { getOption, type DescService } from "@bufbuild/protobuf";
import { createClient, type CallOptions, type Client, type Interceptor, type Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { service_key as serviceKey } from "../../../gen/pf/v1/options_pb.js";

/** The service key a proto service belongs to (its pf.v1.service_key option). */
export function keyOf(service: DescService): string {
  const key = getOption(service, serviceKey);
  if (!key) throw new Error(`${service.typeName} declares no pf.v1.service_key`);
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

/** A typed client whose calls take these options (a deadline, headers) unless the caller gives its own. */
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
      return (request: unknown, options?: CallOptions) => method.call(target, request, withDefaults(defaults, options));
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

/** One transport for the services of every process: each call goes by its service's key (`Transports.for`). */
export function routedTransport(transports: Transports): Transport {
  return {
    unary: (method, ...rest) => transports.for(keyOf(method.parent)).unary(method, ...rest),
    stream: (method, ...rest) => transports.for(keyOf(method.parent)).stream(method, ...rest),
  };
}
