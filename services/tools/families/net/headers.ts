import { fetchOutbound, OutboundError } from "../../../kit/outbound/fetch.js";
import { outboundOf } from "../../domain/probes/aim.js";
import { runProbe } from "../../domain/probes/probe.js";
import { normalHost } from "../../domain/probes/target.js";
import { ToolFailure, type InlineTool } from "../tool.js";

/** What a fetch's failure is, as the run's failure code. */
const FAILURES: Partial<Record<OutboundError["failure"], string>> = {
  refused_address: "tools.probe.refused",
  timeout: "tools.probe.timeout",
  dns: "tools.probe.unresolved",
};

/**
 * net.headers: a HEAD (or GET) of a URL through the kit's guarded fetch: the status and headers of the answer
 * after redirects (at most 5, each hop checked again: a redirect inside fails the run), its body never read.
 */
export const headers: InlineTool = async (input, call) => {
  const url = urlOf(input.url as string);
  const host = normalHost(url.hostname);
  const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
  const outbound = outboundOf(call.ctx);
  const tool = call.ctx.catalogue.available("net.headers");
  return runProbe(call, tool.id, { host, port, over: "fetch" }, async () => {
    try {
      const answer = await fetchOutbound(
        {
          url: url.href,
          method: (input.method as "HEAD" | "GET" | undefined) ?? "HEAD",
          headersOnly: true,
          signal: call.signal,
        },
        // The run's own budget bounds the fetch, redirects and all.
        { ...outbound, totalTimeoutMs: Math.min(outbound.totalTimeoutMs, tool.limits.timeoutMs) },
      );
      return { url: url.href, host, final_url: answer.url, status: answer.status, headers: answer.headers };
    } catch (error) {
      if (!(error instanceof OutboundError)) throw error;
      throw new ToolFailure(FAILURES[error.failure] ?? "tools.probe.failed", `The fetch failed: ${error.message}.`);
    }
  });
};

/** The URL to probe: http or https, no user name or password (the schema checked its scheme already). */
function urlOf(text: string): URL {
  if (!URL.canParse(text)) throw new ToolFailure("tools.input.invalid", "The url is not an absolute URL.");
  const url = new URL(text);
  if (url.username !== "" || url.password !== "")
    throw new ToolFailure("tools.input.invalid", "The url must not carry a user name or password.");
  return url;
}
