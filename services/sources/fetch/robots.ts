import robotsModule from "robots-parser";
import { fetchOutbound, type OutboundSettings } from "../../kit/outbound/fetch.js";

// robots-parser is CommonJS typed as an ES default export: importing it gives the function itself.
const robotsParser = robotsModule as unknown as (typeof robotsModule)["default"];

/**
 * Whether robots.txt of `url`'s origin lets the platform's User-Agent fetch
 * it (RFC 9309): fetched through the guarded client (its redirects too); an
 * answer 4xx (none there) allows everything, 5xx disallows everything (the
 * site is down: RFC 9309 2.3.1.4). A failure to fetch it throws its
 * `OutboundError`: the origin is the one about to be fetched.
 */
export async function robotsAllow(url: string, settings: OutboundSettings): Promise<boolean> {
  const robotsUrl = new URL("/robots.txt", url).href;
  const answer = await fetchOutbound({ url: robotsUrl, headers: { accept: "text/plain" } }, settings);
  if (answer.status >= 500) return false;
  if (answer.status < 200 || answer.status >= 300) return true;
  const robots = robotsParser(robotsUrl, answer.body.toString("utf8"));
  return robots.isAllowed(url, settings.userAgent) !== false;
}
