import { ClientKeys } from "../kit/handler/client-address.js";
import type { ServiceContext } from "../kit/runtime/module.js";
import { dealsSettings, type DealsSettings } from "./settings.js";

/** Built once per deals instance by the host: the service context, the deals settings and the client-address hasher. */
export interface DealsContext extends ServiceContext {
  settings: DealsSettings;
  /** Keyed hashes of client addresses (per-IP vote limits); an address is never stored. */
  clientKeys: ClientKeys;
}

export async function dealsContext(base: ServiceContext): Promise<DealsContext> {
  return { ...base, settings: dealsSettings(base.config), clientKeys: await ClientKeys.load(base.config) };
}
