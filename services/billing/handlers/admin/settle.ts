import type { ServiceImpl } from "@connectrpc/connect";
import type { BillingAdminService } from "../../../../gen/pf/billing/v1/admin_pb.js";
import { problem } from "../../../kit/problem.js";
import type { BillingContext } from "../../context.js";

// STUB: being written.
export function settleHandlers(_ctx: BillingContext): Pick<ServiceImpl<typeof BillingAdminService>, "settlePurchase"> {
  const notYet = () => {
    throw problem(501, "not_implemented", "not yet");
  };
  return { settlePurchase: notYet };
}
