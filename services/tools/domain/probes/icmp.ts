import { addressRefusal } from "../../../kit/outbound/addresses.js";

/** A ping's summary: packets sent and answered, and the round trips of the answers in ms. */
export interface PingReport {
  sent: number;
  received: number;
  loss_percent: number;
  min_ms: number | null;
  avg_ms: number | null;
  max_ms: number | null;
  times_ms: number[];
}

/** `ping` (iputils) with these arguments: numeric, `count` echo requests 0.2 s apart, within `deadlineSeconds`. */
export function pingArgs(address: string, count: number, deadlineSeconds: number): string[] {
  const family = address.includes(":") ? "-6" : "-4";
  return ["-n", family, "-c", String(count), "-i", "0.2", "-W", "2", "-w", String(deadlineSeconds), address];
}

/**
 * Reads iputils ping's output: each reply's `time=… ms`, and the `N packets transmitted, M received` line
 * (stopped early, it has none: the requested count stands for what was sent). Undefined when it shows neither.
 */
export function readPing(stdout: string, requested: number): PingReport | undefined {
  const times = [...stdout.matchAll(/ time=([\d.]+) ms/g)].map((match) => Number(match[1]));
  const summary = /(\d+) packets transmitted, (\d+) received/.exec(stdout);
  if (summary === null && times.length === 0) return undefined;
  const sent = summary ? Number(summary[1]) : requested;
  const received = summary ? Number(summary[2]) : times.length;
  const round = (ms: number) => Math.round(ms * 1000) / 1000;
  return {
    sent,
    received,
    loss_percent: sent === 0 ? 0 : Math.round(((sent - received) / sent) * 1000) / 10,
    min_ms: times.length ? Math.min(...times) : null,
    avg_ms: times.length ? round(times.reduce((sum, ms) => sum + ms, 0) / times.length) : null,
    max_ms: times.length ? Math.max(...times) : null,
    times_ms: times,
  };
}

/** One hop of a traceroute: its router's address (null when none answered, or when it is not public) and time. */
export interface Hop {
  hop: number;
  answered: boolean;
  address: string | null;
  ms: number | null;
}

/** `traceroute` (Debian's, modern) with these arguments: numeric, one probe per hop, up to `maxHops`. */
export function tracerouteArgs(address: string, maxHops: number): string[] {
  const family = address.includes(":") ? "-6" : "-4";
  return ["-n", family, "-q", "1", "-w", "2", "-m", String(maxHops), address];
}

/**
 * Reads traceroute's hop lines (` 3  192.0.2.1  1.234 ms`, ` 4  *`), and whether the last hop answered is
 * `target`. A router in an inside range (the platform's own network, a carrier's CGNAT) answers as a hop without
 * its address: a probe maps public paths only, never the network it starts from.
 */
export function readTraceroute(stdout: string, target: string): { hops: Hop[]; reached: boolean } {
  const hops: Hop[] = [];
  let last: string | undefined;
  for (const line of stdout.split("\n")) {
    const hop = /^\s*(\d+)\s+(.*)$/.exec(line);
    if (hop === null) continue;
    const answer = /^(\S+)\s+([\d.]+)\s*ms/.exec(hop[2]);
    last = answer?.[1];
    if (answer === null) {
      hops.push({ hop: Number(hop[1]), answered: false, address: null, ms: null });
      continue;
    }
    const address = addressRefusal(answer[1]) === undefined ? answer[1] : null;
    hops.push({ hop: Number(hop[1]), answered: true, address, ms: Number(answer[2]) });
  }
  return { hops, reached: last === target };
}
