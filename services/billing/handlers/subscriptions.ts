import type { ServiceImpl } from "@connectrpc/connect";
import type { BillingService } from "../../../gen/pf/billing/v1/billing_pb.js";
import { problem } from "../../kit/problem.js";
import type { BillingContext } from "../context.js";

// STUB: being written.
export function subscriptionHandlers(_ctx: BillingContext): Pick<ServiceImpl<typeof BillingService>, "getEntitlements" | "listSubscriptions" | "createSubscription" | "cancelSubscription"> {
  const notYet = () => {
    throw problem(501, "not_implemented", "not yet");
  };
  return { getEntitlements: notYet, listSubscriptions: notYet, createSubscription: notYet, cancelSubscription: notYet };
}
