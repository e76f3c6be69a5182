import type { Binding } from "./bindings.js";

/** How the router ranks a segment: a literal before a variable before the rest of the path. */
const enum Rank {
  Literal,
  Variable,
  Rest,
}

interface Entry {
  readonly pattern: RegExp;
  readonly host?: RegExp;
  readonly verb: string;
  readonly ranks: readonly Rank[];
  readonly binding: Binding;
}

/**
 * The registered routes, for what the router is not asked: which methods a
 * path answers (405 with Allow, once the router found nothing) and which
 * binding a CORS preflight asks about (the preflight is routed to the CORS
 * plugin, not to the binding). Decided after routing, never by routes of its
 * own: a fixed path for one method must not hide a variable one for another
 * (`POST /pastes/bulk` beside `PUT /pastes/{slug}`).
 */
export class RouteTable {
  private readonly entries: Entry[] = [];

  /** A binding registered at a router path (`/network/internal/modules/:p0/:p1`, `…/*`), on hosts matching `host`. */
  add(binding: Binding, url: string, host?: RegExp): void {
    const parts = url.split("/");
    this.entries.push({
      pattern: pathPattern(parts),
      host,
      verb: binding.verb,
      ranks: parts.map((part) => (part === "*" ? Rank.Rest : part.startsWith(":") ? Rank.Variable : Rank.Literal)),
      binding,
    });
  }

  /** Which methods a path answers; a GET route answers HEAD too. */
  allowed(host: string, path: string): string[] {
    const verbs = new Set(this.matching(host, path).map((entry) => entry.verb));
    if (verbs.has("GET")) verbs.add("HEAD");
    return [...verbs];
  }

  /** The binding the router serves `verb` (HEAD as GET) on this path with. */
  bindingAt(host: string, path: string, verb: string): Binding | undefined {
    const wanted = verb.toUpperCase() === "HEAD" ? "GET" : verb.toUpperCase();
    let best: Entry | undefined;
    for (const entry of this.matching(host, path)) {
      if (entry.verb === wanted && (!best || preferred(entry, best))) best = entry;
    }
    return best?.binding;
  }

  private matching(host: string, path: string): Entry[] {
    return this.entries.filter((entry) => (!entry.host || entry.host.test(host)) && entry.pattern.test(path));
  }
}

/** The router's choice between two routes matching one path: at the first segment they differ in, the lower rank. */
function preferred(entry: Entry, than: Entry): boolean {
  const length = Math.min(entry.ranks.length, than.ranks.length);
  for (let i = 0; i < length; i++) {
    if (entry.ranks[i] !== than.ranks[i]) return entry.ranks[i] < than.ranks[i];
  }
  // A route of a routed host's root is that host's own.
  return entry.host !== undefined && than.host === undefined;
}

/** A router path's segments as a pattern over request paths. */
function pathPattern(parts: readonly string[]): RegExp {
  const source = parts
    .map((part) => (part === "*" ? ".+" : part.startsWith(":") ? "[^/]+" : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
    .join("/");
  return new RegExp(`^${source}$`);
}
