import { problem } from "../../kit/handler/problem.js";

export type MerchantStatus = "pending" | "approved" | "disabled";

/** Where a merchant may go: approved or disabled from pending, and between approved and disabled. Never back to pending. */
const NEXT: Record<MerchantStatus, MerchantStatus[]> = {
  pending: ["approved", "disabled"],
  approved: ["disabled"],
  disabled: ["approved"],
};

/** "same" when the merchant is already there (answered as it is), else "move"; 409 coupons.merchant.transition otherwise. */
export function merchantTransition(from: MerchantStatus, to: MerchantStatus): "same" | "move" {
  if (from === to) return "same";
  if (NEXT[from].includes(to)) return "move";
  throw problem(409, "coupons.merchant.transition", `A ${from} merchant cannot become ${to}.`, {
    merchant_status: from,
  });
}
