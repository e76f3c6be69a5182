import dns from "node:dns/promises";
import type { IncomingHttpHeaders } from "node:http";
import type { Config } from "../runtime/config.js";
import { wholeSetting } from "../runtime/whole-setting.js";
import { addressRefusal, parseAddress } from "./addresses.js";
import { OutboundError } from "./errors.js";
import { discard, exchange, flatHeader, guardedAgent, readBody } from "./exchange.js";

/** The platform's configuration (the contract's name for the kit's `Config`). */
export type PlatformConfig = Config;

/** What `fetchOutbound` may reach and how long and how much it may take. */
export interface OutboundSettings {
  /** `host:port` pairs reachable whatever their address (tests' fixtures on 127.0.0.1); empty by default. */
  allowHosts: readonly string[];
  connectTimeoutMs: number;
  totalTimeoutMs: number;
  /** Cap on the bytes read from the wire and on the decompressed body. */
  maxBytes: number;
  maxRedirects: number;
  userAgent: string;
  /** Answers A and AAAA for a host name; `dns.promises.lookup({ all: true })` when unset (tests inject one). */
  resolve?: Resolver;
}

export type Resolver = (host: string) => Promise<{ address: string; family: 4 | 6 }[]>;

export const PLATFORM_USER_AGENT = "pf-platform/0.1";

/** PF_FETCH_ALLOW_HOSTS (host:port list, off by default), PF_FETCH_TIMEOUT_MS, PF_FETCH_CONNECT_TIMEOUT_MS, PF_FETCH_MAX_BYTES. */
export function outboundSettings(config: PlatformConfig): OutboundSettings {
  const env = config.env;
  const allowHosts = (env.PF_FETCH_ALLOW_HOSTS ?? "")
    .split(",")
    .map((entry) => entry.trim().toLowerCase())
    .filter((entry) => entry !== "");
  for (const entry of allowHosts)
    if (!/^(\[[0-9a-f:.]+\]|[a-z0-9.-]+):\d{1,5}$/.test(entry))
      throw new Error(`PF_FETCH_ALLOW_HOSTS: expected host:port entries, got ${JSON.stringify(entry)}`);
  // It opens loopback and private addresses: a setting for tests' fixtures, never for a real deployment.
  if (config.production && allowHosts.length > 0)
    throw new Error("PF_FETCH_ALLOW_HOSTS is refused with PF_ENV=production");
  return {
    allowHosts,
    connectTimeoutMs: wholeSetting(env, "PF_FETCH_CONNECT_TIMEOUT_MS", 5_000, 1),
    totalTimeoutMs: wholeSetting(env, "PF_FETCH_TIMEOUT_MS", 30_000, 1),
    maxBytes: wholeSetting(env, "PF_FETCH_MAX_BYTES", 10 * 1024 * 1024, 1),
    maxRedirects: 5,
    userAgent: PLATFORM_USER_AGENT,
  };
}

export { OutboundError, type OutboundFailure } from "./errors.js";

export interface OutboundRequest {
  url: string;
  headers?: Record<string, string>;
  /** Sent only to the first URL's host: dropped once a redirect leaves it. */
  credentialHeaders?: Record<string, string>;
  signal?: AbortSignal;
}

export interface OutboundResponse {
  /** The URL that answered (after redirects). */
  url: string;
  status: number;
  headers: Record<string, string>;
  /** The decompressed body. */
  body: Buffer;
}

/** Headers that carry a credential however the caller sent them: dropped with `credentialHeaders` when the host changes. */
const CREDENTIAL_HEADERS = new Set(["authorization", "proxy-authorization", "cookie"]);

/**
 * One GET that cannot be aimed inward (analysis K11): http or https without
 * userinfo, ports 80 and 443, every address the host resolves to public (one
 * refused answer refuses the host), the connection made to the vetted address,
 * redirects followed by hand (each hop checked again; credentials dropped once
 * the host changes or https falls to http), a connect and a total timeout, and
 * a byte cap on the wire and after decompression. A host:port listed in
 * `allowHosts` skips the address and port rules (test fixtures on loopback).
 * Any answer status is returned; failures throw `OutboundError`.
 */
export async function fetchOutbound(request: OutboundRequest, settings: OutboundSettings): Promise<OutboundResponse> {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new OutboundError("timeout", `no answer within ${settings.totalTimeoutMs} ms`)),
    settings.totalTimeoutMs,
  );
  const cancel = () => controller.abort(new OutboundError("timeout", "the fetch was cancelled"));
  if (request.signal?.aborted) cancel();
  request.signal?.addEventListener("abort", cancel, { once: true });
  const agent = guardedAgent(
    (hostname, port) => vet(hostname, port, settings, controller.signal),
    settings.connectTimeoutMs,
  );
  try {
    let url = target(request.url);
    const first = url;
    let headers = lowerCased(request.headers ?? {});
    let credentials = lowerCased(request.credentialHeaders ?? {});
    for (let hop = 0; ; hop++) {
      const sent = {
        ...headers,
        ...credentials,
        "user-agent": settings.userAgent,
        "accept-encoding": "gzip, deflate, br",
      };
      const response = await exchange(agent, url, sent, controller.signal);
      const location = flatHeader(response.headers.location);
      if (REDIRECTS.has(response.statusCode) && location !== undefined) {
        discard(response);
        if (hop >= settings.maxRedirects)
          throw new OutboundError("too_many_redirects", `more than ${settings.maxRedirects} redirects`);
        const next = target(location, url);
        if (next.host !== first.host || (url.protocol === "https:" && next.protocol === "http:")) {
          credentials = {};
          headers = Object.fromEntries(Object.entries(headers).filter(([name]) => !CREDENTIAL_HEADERS.has(name)));
        }
        url = next;
        continue;
      }
      const body = await readBody(response, settings.maxBytes, controller.signal);
      return { url: url.href, status: response.statusCode, headers: flat(response.headers), body };
    }
  } finally {
    clearTimeout(timer);
    request.signal?.removeEventListener("abort", cancel);
    // Its connections end with the fetch (nothing is pooled across fetches); nothing waits on that.
    agent.destroy().catch(() => undefined);
  }
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** A URL this client may ask for: http or https, no user name or password. */
function target(value: string, base?: URL): URL {
  if (!URL.canParse(value, base?.href)) throw new OutboundError("invalid_url", "not an absolute URL");
  const url = new URL(value, base);
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new OutboundError("invalid_url", `scheme ${url.protocol} is not http or https`);
  if (url.username !== "" || url.password !== "")
    throw new OutboundError("invalid_url", "a URL must not carry a user name or password");
  url.hash = "";
  return url;
}

/**
 * Resolves the host a connection is for and checks every answer, before the
 * socket exists (the agent's connect hook); answers the address to connect
 * to. The detail names the range refused, never the address (a run's detail
 * must not map someone's internal network).
 */
async function vet(
  hostname: string,
  port: number,
  settings: OutboundSettings,
  signal: AbortSignal,
): Promise<{ address: string }> {
  const host = hostname.includes(":") ? `[${hostname}]` : hostname; // as URL.hostname and allowHosts write it
  const listed = settings.allowHosts.includes(`${host}:${port}`);
  const literal = parseAddress(hostname);
  const answers = literal
    ? [literal.toString()]
    : await resolveHost(hostname, settings.resolve ?? systemResolver, signal);
  if (!listed) {
    for (const address of answers) {
      const refused = addressRefusal(address);
      if (refused !== undefined)
        throw new OutboundError("refused_address", `${host} is a ${refused} address, never fetched`);
    }
    if (port !== 80 && port !== 443)
      throw new OutboundError("refused_address", `port ${port} is not fetched (only 80 and 443)`);
  }
  return { address: answers[0] };
}

async function resolveHost(host: string, resolve: Resolver, signal: AbortSignal) {
  let answers: Awaited<ReturnType<Resolver>>;
  try {
    answers = await Promise.race([resolve(host), aborted(signal)]);
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    throw new OutboundError("dns", `${host} does not resolve (${(error as NodeJS.ErrnoException).code ?? "error"})`);
  }
  const parsed = answers.map((answer) => parseAddress(answer.address));
  if (parsed.length === 0 || parsed.some((address) => address === undefined))
    throw new OutboundError("dns", `${host} resolves to no address`);
  return parsed.map((address) => address!.toString());
}

const systemResolver: Resolver = async (host) =>
  (await dns.lookup(host, { all: true, verbatim: true })).map(({ address, family }) => ({
    address,
    family: family === 6 ? 6 : 4,
  }));

function aborted(signal: AbortSignal): Promise<never> {
  return new Promise((_resolve, reject) =>
    signal.addEventListener("abort", () => reject(signal.reason as Error), { once: true }),
  );
}

function lowerCased(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}

function flat(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) out[name] = flatHeader(value)!;
  return out;
}
