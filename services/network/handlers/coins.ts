import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import {
  CoinsBalanceResultSchema,
  CoinsChangeRequestSchema,
  CoinsTransferRequestSchema,
  CoinsTransferResultSchema,
  type CoinsChangeRequest,
  type NetworkService,
} from "../../../gen/pf/network/v1/network_pb.js";
import { principalOf } from "../../kit/auth/principal.js";
import { idempotencyKeyOf, idempotent, requestHash } from "../../kit/handler/idempotency.js";
import { newId } from "../../kit/handler/ids.js";
import type { ServiceContext } from "../../kit/runtime/module.js";
import { maxLength } from "../../kit/handler/text.js";
import { invalid } from "../../kit/handler/problem.js";
import { applyChange, lockAccounts } from "../db/ledger.js";
import { coinsAppId, lockOrder, requireAmount } from "../domain/coins.js";
import { requireUser } from "../../kit/handler/subjects.js";
import { coinsChanged, coinsTransferred } from "../events.js";

type CoinsHandlers = Pick<ServiceImpl<typeof NetworkService>, "creditCoins" | "debitCoins" | "transferCoins">;

/** Loyalty coins: a ledger of entries per app and user; never money. */
export function coinsHandlers(ctx: ServiceContext): CoinsHandlers {

  async function change(request: CoinsChangeRequest, call: HandlerContext, sign: 1n | -1n) {
    const principal = principalOf(call);
    const appId = coinsAppId(principal, request.appId);
    const subject = requireUser("subject", request.subject);
    const amount = requireAmount("amount", request.amount);
    const key = idempotencyKeyOf(request.idempotencyKey, call);
    if (sign === 1n && key === "") throw invalid("idempotency_key", "Coin credit needs an idempotency_key.");
    maxLength("reason", request.reason, 200);
    return ctx.transaction((em) => {
      const apply = async () => {
        const at = ctx.clock.now();
        const balances = await lockAccounts(em, appId, [subject], at);
        const reason = request.reason || (sign === 1n ? "credit" : "debit");
        const delta = sign * amount;
        const applied = await applyChange(em, { appId, subject, delta, current: balances.get(subject)!, reason, at });
        await coinsChanged(em, { entryId: applied.entryId, appId, subject, delta, balance: applied.balance, reason, at });
        return create(CoinsBalanceResultSchema, { subject, appId, balance: applied.balance, entryId: applied.entryId });
      };
      if (key === "") return apply();
      // Keys are the caller's own: two services choosing the same key never collide.
      const scope = `coins.${sign === 1n ? "credit" : "debit"}:${appId}:${principal.sub}`;
      const hash = requestHash(CoinsChangeRequestSchema, { ...request, idempotencyKey: "", appId });
      return idempotent(em, { scope, key, hash }, CoinsBalanceResultSchema, apply);
    });
  }

  return {
    creditCoins: (request, call) => change(request, call, 1n),
    debitCoins: (request, call) => change(request, call, -1n),

    async transferCoins(request, call) {
      const principal = principalOf(call);
      const appId = coinsAppId(principal, request.appId);
      const from = requireUser("from_subject", request.fromSubject);
      const to = requireUser("to_subject", request.toSubject);
      if (from === to) throw invalid("to_subject", "A transfer moves coins between two different users.");
      const amount = requireAmount("amount", request.amount);
      const key = idempotencyKeyOf(request.idempotencyKey, call);
      maxLength("reason", request.reason, 200);
      return ctx.transaction((em) => {
        const apply = async () => {
          const at = ctx.clock.now();
          const balances = await lockAccounts(em, appId, lockOrder(from, to), at);
          const transferId = newId("cnt");
          const reason = request.reason || "transfer";
          const debited = await applyChange(em, { appId, subject: from, delta: -amount, current: balances.get(from)!, reason, transferId, at });
          const credited = await applyChange(em, { appId, subject: to, delta: amount, current: balances.get(to)!, reason, transferId, at });
          await coinsTransferred(em, { transferId, appId, fromSubject: from, toSubject: to, amount, at });
          return create(CoinsTransferResultSchema, {
            transferId,
            appId,
            from: { subject: from, balance: debited.balance },
            to: { subject: to, balance: credited.balance },
          });
        };
        if (key === "") return apply();
        const hash = requestHash(CoinsTransferRequestSchema, { ...request, idempotencyKey: "", appId });
        return idempotent(em, { scope: `coins.transfer:${appId}:${principal.sub}`, key, hash }, CoinsTransferResultSchema, apply);
      });
    },
  };
}
