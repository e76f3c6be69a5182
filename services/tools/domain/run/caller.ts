import type { HandlerContext } from "@connectrpc/connect";
import { ownerOf } from "../../../kit/auth/principal.js";
import type { ClientKeys } from "../../../kit/handler/client-address.js";

/**
 * Whom a call counts against and who owns what it creates (a job): the person it acts for (a user or guest token's
 * `usr_…`/`gst_…`, or a service's X-PF-Subject), else the app or service itself (`app:<id>`, `svc:<key>`); an
 * anonymous caller is `ip:` and a keyed hash of its address (an IPv6 address by its /64, so hopping within the
 * block a subscriber holds dodges nothing), never the address itself. Anonymous calls that came through no gateway
 * (made in process) have no address and share `ip:unknown`.
 */
export function callerKeyOf(ctx: { clientKeys: ClientKeys }, call: HandlerContext): string {
  const owner = ownerOf(call);
  if (owner !== "") return owner;
  return `ip:${ctx.clientKeys.of(call.requestHeader) || "unknown"}`;
}
