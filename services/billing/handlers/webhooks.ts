import type { ServiceImpl } from "@connectrpc/connect";
import type { BillingService } from "../../../gen/pf/billing/v1/billing_pb.js";
import { problem } from "../../kit/problem.js";
import type { BillingContext } from "../context.js";

// STUB: being written.
export function webhookHandlers(_ctx: BillingContext): Pick<ServiceImpl<typeof BillingService>, "receiveProviderWebhook"> {
  const notYet = () => {
    throw problem(501, "not_implemented", "not yet");
  };
  return { receiveProviderWebhook: notYet };
}
