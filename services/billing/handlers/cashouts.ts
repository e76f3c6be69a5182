import type { ServiceImpl } from "@connectrpc/connect";
import type { BillingService } from "../../../gen/pf/billing/v1/billing_pb.js";
import { problem } from "../../kit/problem.js";
import type { BillingContext } from "../context.js";

// STUB: being written.
export function cashoutHandlers(_ctx: BillingContext): Pick<ServiceImpl<typeof BillingService>, "listCashouts" | "requestCashout" | "getCashout" | "approveCashout" | "denyCashout" | "recyclePayable"> {
  const notYet = () => {
    throw problem(501, "not_implemented", "not yet");
  };
  return { listCashouts: notYet, requestCashout: notYet, getCashout: notYet, approveCashout: notYet, denyCashout: notYet, recyclePayable: notYet };
}
