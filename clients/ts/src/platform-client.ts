import { createClient, type Client, type Interceptor, type Transport } from "@connectrpc/connect";
import { addCallerHeaders, type Caller } from "./headers.js";
import { problems } from "./problems.js";
import { retries } from "./retries.js";
import { retryPolicyOf, type RetryPolicy } from "./retry-policy.js";
import { services, type PlatformServices } from "./services.js";

/** Makes the transport a platform client calls through, given the interceptors it must run on every call. */
export type TransportFactory = (options: { baseUrl: string; interceptors: Interceptor[] }) => Transport;

export interface PlatformClientOptions extends Caller {
  /** Where the transport sends calls: the RPC port by default (`http://127.0.0.1:8081`). */
  baseUrl: string;
  /** How failed calls are tried again (retry-policy.ts; unset members keep their defaults); false: never. */
  retries?: Partial<RetryPolicy> | false;
  /**
   * Makes the transport: Connect over HTTP/2 by default in Node, over fetch in a browser. Pass another to call
   * the gateway's port with Connect or gRPC-Web (`createGrpcWebTransport` of `@connectrpc/connect-web`).
   */
  transport?: TransportFactory;
  /** Interceptors run on each try of each call, after the platform's own (logging, tracing). */
  interceptors?: Interceptor[];
}

/** A typed Connect client for every service the platform serves, by the names of `services`. */
export type PlatformClient = { readonly [Name in keyof PlatformServices]: Client<PlatformServices[Name]> };

/**
 * A platform client on the transport the options make, else on `defaultTransport`. Every call runs, outermost
 * first: refusals turned into PlatformErrors, the caller's token and X-PF-* headers (once a call), retries, and
 * the caller's own interceptors (on each try).
 */
export function platformClient(options: PlatformClientOptions, defaultTransport: TransportFactory): PlatformClient {
  const caller: Interceptor = (next) => async (req) => {
    await addCallerHeaders(req.header, options);
    return next(req);
  };
  const transport = (options.transport ?? defaultTransport)({
    baseUrl: options.baseUrl,
    interceptors: [problems(), caller, retries(retryPolicyOf(options.retries)), ...(options.interceptors ?? [])],
  });
  const clients: Partial<Record<keyof PlatformServices, unknown>> = {};
  for (const name of Object.keys(services) as (keyof PlatformServices)[])
    clients[name] = createClient(services[name], transport);
  return clients as PlatformClient;
}
