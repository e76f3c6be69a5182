import type { Client } from "@connectrpc/connect";
import { BillingService } from "../../gen/pf/billing/v1/billing_pb.js";
import type { ServiceContext } from "../kit/module.js";
import { tipsSettings, type TipsSettings } from "./settings.js";

/** Built once per tips instance: the service context, the tips settings and the billing client. */
export interface TipsContext extends ServiceContext {
  settings: TipsSettings;
  /** Billing, called with the tips service's own token (billing.transfer.create, billing.intent.create). */
  billing: Client<typeof BillingService>;
}

const built = new WeakMap<ServiceContext, TipsContext>();

/** The tips context of a service context: handlers, consumers and workers of one instance share it. */
export function tipsContext(ctx: ServiceContext): TipsContext {
  let found = built.get(ctx);
  if (!found) {
    found = { ...ctx, settings: tipsSettings(ctx.config), billing: ctx.client(BillingService) };
    built.set(ctx, found);
  }
  return found;
}
