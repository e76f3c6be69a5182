import type { ServiceContext, Worker } from "../../kit/service/module.js";
import type { HostContext } from "../context.js";
import { listenForSites } from "../serving/listener.js";

/** Where each instance's sites listener answers, by its context (tests and benches reach a free port through it). */
const listening = new WeakMap<ServiceContext, string>();

/** The sites listener's URL (http://<bind>:<port>) of this instance, while it serves. */
export function sitesUrl(ctx: ServiceContext): string | undefined {
  return listening.get(ctx);
}

/** The sites, served on their own listener for as long as the instance runs (services/host/serving). */
export const serving: Worker<HostContext> = async (ctx) => {
  const listener = await listenForSites(ctx);
  listening.set(ctx, listener.url);
  ctx.logger.info({ url: listener.url, sitesDomain: ctx.settings.sitesDomain }, "serving the sites");
  return async () => {
    listening.delete(ctx);
    await listener.close();
  };
};
