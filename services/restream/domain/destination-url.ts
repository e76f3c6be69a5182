import { problem } from "../../kit/handler/problem.js";
import { isPublicHost } from "../../kit/outbound/public-host.js";

export type DestinationScheme = "rtmp" | "rtmps" | "srt";

/** Where a destination URL points: the URL as stored, its scheme, host (as URL.hostname writes it, IPv6 in brackets) and port. */
export interface DestinationTarget {
  url: string;
  scheme: DestinationScheme;
  host: string;
  port: number;
}

const DEFAULT_PORTS: Record<DestinationScheme, number | undefined> = { rtmp: 1935, rtmps: 443, srt: undefined };

/** A host name or an address as written: no percent-encoding or other characters a resolver might read otherwise. */
const PLAIN_HOST = /^([a-z0-9-]+(\.[a-z0-9-]+)*\.?|\[[0-9a-f:.]+\])$/i;

/** 400 restream.destination_invalid naming `url`. */
export function destinationInvalid(detail: string) {
  return problem(400, "restream.destination_invalid", detail, { field: "url" });
}

/**
 * A destination URL checked as written: scheme rtmp, rtmps or srt, no user name or password, no `passphrase=` or
 * `streamid=` in the query (secrets go in their own write-only fields), a public host (the kit's isPublicHost), and
 * a port (srt has no default). `allowHosts` (PF_FETCH_ALLOW_HOSTS, tests only) lifts the public-host rule for a
 * listed host:port. What the name resolves to is judged again whenever an output starts or the destination is tested.
 */
export function checkDestinationUrl(value: string, allowHosts: readonly string[]): DestinationTarget {
  if (!URL.canParse(value)) throw destinationInvalid("url is not an absolute URL.");
  const url = new URL(value);
  const scheme = url.protocol.slice(0, -1).toLowerCase();
  if (scheme !== "rtmp" && scheme !== "rtmps" && scheme !== "srt")
    throw destinationInvalid("url must be rtmp://, rtmps:// or srt://.");
  if (url.username !== "" || url.password !== "")
    throw destinationInvalid("url must not carry a user name or password.");
  for (const name of url.searchParams.keys())
    if (["passphrase", "streamid"].includes(name.toLowerCase()))
      throw destinationInvalid(`url must not carry ${name.toLowerCase()}: send it as stream_key or passphrase.`);
  const host = url.hostname.toLowerCase();
  if (!PLAIN_HOST.test(host)) throw destinationInvalid("url must name a host.");
  const port = url.port === "" ? DEFAULT_PORTS[scheme] : Number(url.port);
  if (port === undefined) throw destinationInvalid("An srt url must name its port.");
  if (!allowHosts.includes(`${host}:${port}`) && !isPublicHost(host))
    throw destinationInvalid("url must name a public host, not a local, private or reserved address.");
  url.hash = "";
  return { url: url.href, scheme, host, port };
}

/**
 * The URL FFmpeg pushes to, secrets included (never stored, logged or answered): rtmp and rtmps append the stream
 * key as the last path segment; srt carries it as `streamid` and the passphrase as `passphrase` in the query.
 */
export function pushUrl(url: string, scheme: DestinationScheme, key: string, passphrase: string): string {
  if (scheme !== "srt") return key === "" ? url : `${url.replace(/\/+$/, "")}/${key}`;
  const push = new URL(url);
  if (key !== "") push.searchParams.set("streamid", key);
  if (passphrase !== "") push.searchParams.set("passphrase", passphrase);
  return push.href;
}

/** The container FFmpeg writes: flv for rtmp and rtmps, mpegts for srt. */
export function formatOf(scheme: DestinationScheme): "flv" | "mpegts" {
  return scheme === "srt" ? "mpegts" : "flv";
}

/** The scheme of a URL already checked when it was stored. */
export function schemeOf(url: string): DestinationScheme {
  return url.slice(0, url.indexOf(":")).toLowerCase() as DestinationScheme;
}

/** What is kept in the clear of a stream key: its last four characters, fewer of a short key (at most a third). */
export function keyHint(key: string): string {
  return key.slice(key.length - Math.min(4, Math.floor(key.length / 3)));
}

/** A set key as reads show it: `••••abcd`. */
export function maskedKey(hint: string): string {
  return `••••${hint}`;
}
