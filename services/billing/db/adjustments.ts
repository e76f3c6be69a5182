import type { EntityManager } from "@mikro-orm/postgresql";
import type { LedgerTransaction } from "../../../gen/pf/billing/v1/ledger_pb.js";
import { adjustmentPosted } from "../events.js";
import { loadTransactions } from "./history.js";
import { post, type Posting } from "./ledger.js";

/**
 * Posts a ledger admin's movement (an adjustment, an import hold or its
 * release) and publishes billing.adjustment.posted with the written transaction.
 */
export async function postAdjustment(em: EntityManager, posting: Posting): Promise<LedgerTransaction> {
  const { transactionId } = await post(em, posting);
  const [transaction] = await loadTransactions(em, [transactionId]);
  await adjustmentPosted(em, transaction, posting.at);
  return transaction;
}
