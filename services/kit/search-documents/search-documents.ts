import { leasedJob } from "../service/lease.js";
import type { ServiceContext, Worker } from "../service/module.js";
import { connectSearchIndex } from "./connect-index.js";
import type { SearchDocumentSource, SearchIndex } from "./document.js";
import { compareInventory, sweep } from "./reconcile.js";
import { SearchRelay } from "./relay.js";
import { searchDocumentSettings } from "./settings.js";
import { statementsOf } from "./statements.js";

/** The capability an owner's token needs for its documents: list it in the module's `holds`. */
export const SEARCH_DOCUMENT_WRITE = "search.document.write";

/**
 * The workers that carry an owner's search documents to search, each leased (one instance at a time): the relay
 * pushes pending documents after each commit that recorded some, and on its poll; the reconciliation sweeps the sources and compares with search's inventory. Handlers
 * record what they change with `refreshSearchDocuments` in their own transaction. `index` replaces the search
 * service's client (tests).
 */
export function searchDocumentWorkers<C extends ServiceContext>(options: {
  sources: SearchDocumentSource[];
  index?: (ctx: C) => SearchIndex;
}): Worker<C>[] {
  const indexOf = options.index ?? ((ctx: C) => connectSearchIndex(ctx.key, (service) => ctx.client(service)));
  const relay: Worker<C> = async (ctx) => {
    const settings = searchDocumentSettings(ctx.config.env);
    const pusher = new SearchRelay(indexOf(ctx), statementsOf(ctx.orm), settings, ctx.logger);
    return leasedJob<C>(
      "kit.search-relay",
      { everyMs: settings.pollMs, firstAfterMs: 0, wakeOn: "search-documents" },
      () => pusher.pass().then(() => undefined),
    )(ctx);
  };
  const reconciliation: Worker<C> = async (ctx) => {
    const settings = searchDocumentSettings(ctx.config.env);
    const index = indexOf(ctx);
    return leasedJob<C>(
      "kit.search-reconcile",
      { everyMs: settings.reconcileEveryMs, firstAfterMs: settings.reconcileFirstMs },
      async () => {
        await sweep((work) => ctx.transaction(work), options.sources, ctx.clock);
        const repaired = await compareInventory(index, statementsOf(ctx.orm));
        if (repaired > 0) ctx.logger.info({ repaired }, "search documents out of step with search go again");
      },
    )(ctx);
  };
  return [relay, reconciliation];
}
