import createClient, { type Client } from "openapi-fetch";
import type { paths } from "./generated/openapi.js";
import { addCallerHeaders, type Caller } from "./headers.js";
import { retryingFetch } from "./retries.js";
import { retryPolicyOf, type RetryPolicy } from "./retry-policy.js";

export interface PlatformFetchOptions extends Caller {
  /** The gateway's URL (`http://127.0.0.1:8080` under `npm start`): paths are the gateway's, `/<service>/…`. */
  baseUrl: string;
  /** How failed requests are tried again (retry-policy.ts; unset members keep their defaults); false: never. */
  retries?: Partial<RetryPolicy> | false;
  /** Sends one request (default: the global fetch). */
  fetch?: (request: Request) => Promise<Response>;
}

/** An openapi-fetch client over the gateway's JSON routes, typed by the platform's OpenAPI document. */
export type PlatformFetch = Client<paths>;

/**
 * Typed calls of the JSON routes (`GET`, `POST`, … with the route's path, its `params` and `body` checked against
 * the OpenAPI document), with the caller's token and X-PF-* headers on every request and retries as the Connect
 * clients make them. A refusal is answered as `error`: the route's problem (RFC 9457), with `code` and `status`.
 */
export function createPlatformFetch(options: PlatformFetchOptions): PlatformFetch {
  const fetchOnce = options.fetch ?? ((request: Request) => fetch(request));
  const client = createClient<paths>({
    baseUrl: options.baseUrl,
    fetch: retryingFetch(retryPolicyOf(options.retries), fetchOnce),
  });
  client.use({
    async onRequest({ request }) {
      await addCallerHeaders(request.headers, options);
      return request;
    },
  });
  return client;
}
