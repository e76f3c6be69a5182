import { ClientKeys } from "../kit/client-keys.js";
import type { ServiceContext } from "../kit/module.js";
import { dealsSettings, type DealsSettings } from "./settings.js";

/** Built once per deals instance: the service context, the deals settings and the client-address hasher. */
export interface DealsContext extends ServiceContext {
  settings: DealsSettings;
  /** Keyed hashes of client addresses (per-IP vote limits); an address is never stored. */
  clientKeys: ClientKeys;
}

const built = new WeakMap<ServiceContext, Promise<DealsContext>>();

/** The deals context of a service context: handlers and workers of one instance share it. */
export function dealsContext(ctx: ServiceContext): Promise<DealsContext> {
  let found = built.get(ctx);
  if (!found) {
    found = ClientKeys.load(ctx.config).then((clientKeys) => ({ ...ctx, settings: dealsSettings(ctx.config), clientKeys }));
    built.set(ctx, found);
  }
  return found;
}
