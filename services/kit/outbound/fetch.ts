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
  /** HEAD asks for the headers alone; GET by default. */
  method?: "GET" | "HEAD";
  /** Drop the final answer's body unread (`body` empty): its status and headers are all that is wanted (a probe). */
  headersOnly?: boolean;
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
    (hostname, port) => vetConnection(hostname, port, settings, controller.signal),
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
      const response = await exchange(agent, url, sent, controller.signal, request.method);
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
      if (request.headersOnly) discard(response);
      const body = request.headersOnly
        ? Buffer.alloc(0)
        : await readBody(response, settings.maxBytes, controller.signal);
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
export async function vetConnection(
  hostname: string,
  port: number,
  settings: OutboundSettings,
  signal: AbortSignal,
): Promise<{ address: string }> {
  const { addresses, refused } = await resolveTarget(hostname, port, settings, signal);
  if (refused !== undefined)
    throw new OutboundError("refused_address", `${hostWritten(hostname)} is a ${refused} address, never fetched`);
  if (port !== 80 && port !== 443 && !listed(hostname, port, settings))
    throw new OutboundError("refused_address", `port ${port} is not fetched (only 80 and 443)`);
  return { address: addresses[0] };
}

/**
 * The addresses a host resolves to (an address as written is its own), judged as `fetchOutbound` judges them, for
 * a connection it does not make itself (a TCP or TLS probe, a ping): `refused` is the range of the first answer
 * refused (one refuses the host), undefined when all are public or `allowHosts` lists the host. Connect to one of
 * `addresses`, never to the name again, so DNS cannot rebind between the check and the connection. No port rule
 * (that is the fetch's own): `port` only looks the host up in `allowHosts`, and without one (ICMP) any entry of
 * the host lifts the check. Throws `OutboundError` `dns` when the name does not resolve.
 */
export async function resolveTarget(
  hostname: string,
  port: number | undefined,
  settings: OutboundSettings,
  signal: AbortSignal,
): Promise<{ addresses: string[]; refused?: string }> {
  const literal = parseAddress(hostname);
  const addresses = literal
    ? [literal.toString()]
    : await resolveHost(hostname, settings.resolve ?? systemResolver, signal);
  if (listed(hostname, port, settings)) return { addresses };
  const refused = addresses.map((address) => addressRefusal(address)).find((range) => range !== undefined);
  return { addresses, refused };
}

/** Whether `allowHosts` lists the host at `port` (any port of it when none is given). */
function listed(hostname: string, port: number | undefined, settings: OutboundSettings): boolean {
  const host = hostWritten(hostname);
  return port === undefined
    ? settings.allowHosts.some((entry) => entry.startsWith(`${host}:`))
    : settings.allowHosts.includes(`${host}:${port}`);
}

/** A host as URL.hostname and allowHosts write it: IPv6 in brackets. */
function hostWritten(hostname: string): string {
  return hostname.includes(":") && !hostname.startsWith("[") ? `[${hostname}]` : hostname;
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
