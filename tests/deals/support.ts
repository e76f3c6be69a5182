import type { DealsContext } from "../../services/deals/context.js";
import type { TestPlatform } from "../support/platform.js";

/** Every deals capability: the first-party web service's token. */
export const ALL_DEALS = [
  "deals.offer.submit",
  "deals.offer.update",
  "deals.offer.expire",
  "deals.offer.moderate",
  "deals.offer.merge",
  "deals.flag.create",
  "deals.vote.set",
  "deals.vote.remove",
  "deals.product.resolve",
  "deals.watch.read",
  "deals.watch.create",
  "deals.watch.delete",
];

/** The deals context the host built (once) for the platform's handlers and workers. */
export const dealsOf = (t: TestPlatform) => t.platform.contexts.get("deals") as DealsContext;

let n = 0;
/** A fresh person id. */
export const person = (tag = "p") => `usr_${tag}${Date.now().toString(36)}${(n++).toString(36)}`;

/** Calls as the web service acting for a person (and stating staff when asked). */
export function actingFor(t: TestPlatform, token: () => string) {
  return (method: string, path: string, who: string, body?: unknown, extra: Record<string, string> = {}) =>
    t.http(method, `/deals/api/v1${path}`, { token: token(), body, headers: { "x-pf-subject": who, ...extra } });
}

/** Submits an offer for a person; answers the 201 body. */
export async function submit(
  t: TestPlatform,
  token: string,
  who: string,
  body: Record<string, unknown> = {},
  headers: Record<string, string> = {},
) {
  const answer = await t.http("POST", "/deals/api/v1/offers", {
    token,
    body: { link: `https://shop.example/${who}/${n++}`, title: "Lego castle 10305", ...body },
    headers: { "x-pf-subject": who, ...headers },
  });
  if (answer.status !== 201) throw new Error(`submit failed: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body;
}
