import { ClientKeys } from "../kit/handler/client-address.js";
import type { ServiceContext } from "../kit/runtime/module.js";

/** Built once per coupons instance by the host: the service context and the client-address hasher (per-IP limits). */
export interface CouponsContext extends ServiceContext {
  clientKeys: ClientKeys;
}

export async function couponsContext(base: ServiceContext): Promise<CouponsContext> {
  return { ...base, clientKeys: await ClientKeys.load(base.config) };
}
