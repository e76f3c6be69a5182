import type { InlineTool } from "../tool.js";
import { headers } from "./headers.js";
import { latency } from "./latency.js";
import { ping } from "./ping.js";
import { port } from "./port.js";
import { tls } from "./tls.js";
import { traceroute } from "./traceroute.js";

/** The network probe tools, by id: each aimed, throttled and logged by domain/probes/probe.ts. */
export const netTools: Record<string, InlineTool> = {
  "net.port": port,
  "net.latency": latency,
  "net.tls": tls,
  "net.headers": headers,
  "net.ping": ping,
  "net.traceroute": traceroute,
};
