import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { HostContext } from "../context.js";
import { sitesHandler } from "./answer.js";
import { FileBytes } from "./bytes.js";
import { ServingCache } from "./cache.js";

/** The sites' own listener, running: its address and how to stop it. */
export interface SitesListener {
  url: string;
  close(): Promise<void>;
}

/**
 * Serves the sites on PF_HOST_SITES_PORT: a plain node:http server, apart from the API's (its own port, so its own
 * origin; it never sets a cookie), with what it remembers of the sites dropped on every host event.
 */
export async function listenForSites(ctx: HostContext): Promise<SitesListener> {
  const cache = new ServingCache(ctx);
  const unsubscribe = cache.listen();
  const server = createServer(sitesHandler(cache, new FileBytes(ctx.blobs, ctx.logger), ctx.logger));
  const { bind } = ctx.config;
  const port = ctx.settings.sitesPort;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", (error) =>
        reject(new Error(`PF_HOST_SITES_PORT: cannot serve the sites on ${bind}:${port}`, { cause: error })),
      );
      server.listen(port, bind, () => {
        server.removeAllListeners("error");
        resolve();
      });
    });
  } catch (error) {
    unsubscribe();
    throw error;
  }
  const address = server.address() as AddressInfo;
  return {
    url: `http://${bind.includes(":") ? `[${bind}]` : bind}:${address.port}`,
    async close() {
      unsubscribe();
      const closed = new Promise((resolve) => server.close(resolve));
      server.closeAllConnections();
      await closed;
    },
  };
}
