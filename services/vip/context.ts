import type { Client } from "@connectrpc/connect";
import { BillingService } from "../../gen/pf/billing/v1/billing_pb.js";
import type { ServiceContext } from "../kit/module.js";
import { vipSettings, type VipSettings } from "./settings.js";

/** Built once per membership instance: the service context, its settings and its billing client. */
export interface VipContext extends ServiceContext {
  settings: VipSettings;
  billing: Client<typeof BillingService>;
}

const built = new WeakMap<ServiceContext, VipContext>();

/** The membership context of a service context: handlers and consumers of one instance share it. */
export function vipContext(ctx: ServiceContext): VipContext {
  let found = built.get(ctx);
  if (!found) {
    found = { ...ctx, settings: vipSettings(ctx.config), billing: ctx.client(BillingService) };
    built.set(ctx, found);
  }
  return found;
}
