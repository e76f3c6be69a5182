import { problem } from "../../../kit/handler/problem.js";
import {
  OutboundError,
  outboundSettings,
  resolveTarget,
  vetConnection,
  type OutboundSettings,
} from "../../../kit/outbound/fetch.js";
import type { ServiceContext } from "../../../kit/service/module.js";
import { ToolFailure } from "../../families/tool.js";

/** The kit's outbound settings (PF_FETCH_*), read once per context: the allow-list tests lift the rule with. */
const settings = new WeakMap<ServiceContext, OutboundSettings>();

export function outboundOf(ctx: ServiceContext): OutboundSettings {
  let found = settings.get(ctx);
  if (found === undefined) {
    found = outboundSettings(ctx.config);
    settings.set(ctx, found);
  }
  return found;
}

/** Where a probe goes: a host as the caller named it (normalised) and, for TCP, TLS and HTTP, a port. */
export interface ProbeTarget {
  host: string;
  port?: number;
  /**
   * `connect` (TCP, TLS, ICMP: any port, the probe connects to the address itself) or `fetch` (HTTP through the
   * kit's guarded fetch, whose own rules apply to the first hop here: ports 80 and 443).
   */
  over: "connect" | "fetch";
}

/**
 * The address a probe connects to: the host's first answer, every answer checked by the kit's guard (the
 * address a caller wrote, or any a name resolves to, in a loopback, private, link-local, CGNAT, metadata or other
 * inside range refuses the host) with 400 tools.target_refused, whose detail names the range, never an address.
 * A name that does not resolve fails the run (tools.probe.unresolved). PF_FETCH_ALLOW_HOSTS (host:port, tests
 * only, refused in production) lifts the check for a listed target.
 */
export async function aimAt(ctx: ServiceContext, target: ProbeTarget, signal: AbortSignal): Promise<string> {
  const outbound = outboundOf(ctx);
  try {
    if (target.over === "fetch") return (await vetConnection(target.host, target.port!, outbound, signal)).address;
    const { addresses, refused } = await resolveTarget(target.host, target.port, outbound, signal);
    if (refused !== undefined) throw targetRefused(target.host, `it is, or resolves to, a ${refused} address`);
    return addresses[0];
  } catch (error) {
    if (!(error instanceof OutboundError)) throw error;
    if (error.failure === "refused_address") throw targetRefused(target.host, error.message);
    if (error.failure === "dns") throw new ToolFailure("tools.probe.unresolved", error.message);
    throw new ToolFailure("tools.probe.failed", error.message);
  }
}

/** 400: a target inside (or, over HTTP, on a port other than 80 and 443); never probed. */
function targetRefused(host: string, why: string) {
  return problem(
    400,
    "tools.target_refused",
    `The target ${host} is refused (${why}): probes reach public hosts only.`,
    { host },
  );
}
