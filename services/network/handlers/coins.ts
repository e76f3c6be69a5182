import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import {
  CoinsBalanceResultSchema,
  CoinsTransferResultSchema,
  type CoinsChangeRequest,
  type CoinsTransferRequest,
  type NetworkService,
} from "../../../gen/pf/network/v1/network_pb.js";
import { principalOf } from "../../kit/auth/principal.js";
import { idempotencyOf } from "../../kit/writes/idempotency.js";
import { newId } from "../../kit/handler/ids.js";
import { invalid } from "../../kit/handler/problem.js";
import type { ServiceContext } from "../../kit/service/module.js";
import { applyChange, lockAccounts } from "../db/ledger.js";
import { coinsAppId, lockOrder } from "../domain/coins.js";
import { coinsChanged, coinsTransferred } from "../events.js";

type CoinsHandlers = Pick<ServiceImpl<typeof NetworkService>, "creditCoins" | "debitCoins" | "transferCoins">;

/**
 * Loyalty coins: a ledger of entries per app and user; never money. Keys are
 * the caller's own (the scope names the app and the calling token: two
 * services choosing the same key never collide). A request is hashed with its
 * app_id filled in, so naming the token's own app or leaving it out is the
 * same request.
 */
export function coinsHandlers(ctx: ServiceContext): CoinsHandlers {
  async function change(request: CoinsChangeRequest, call: HandlerContext, sign: 1n | -1n) {
    const principal = principalOf(call);
    const appId = coinsAppId(principal, request.appId);
    const { subject, amount } = request;
    const normalized: CoinsChangeRequest = { ...request, appId };
    const idempotency = idempotencyOf(call, normalized, {
      scope: `coins.${sign === 1n ? "credit" : "debit"}:${appId}:${principal.sub}`,
      // A credit is never applied twice: it needs a key.
      required: sign === 1n,
    });
    return ctx.transaction((em) =>
      idempotency.run(em, async () => {
        const at = ctx.clock.now();
        const balances = await lockAccounts(em, appId, [subject], at);
        const reason = request.reason || (sign === 1n ? "credit" : "debit");
        const delta = sign * amount;
        const current = balances.get(subject)!;
        const { entryId, balance } = await applyChange(em, { appId, subject, delta, current, reason, at });
        await coinsChanged(em, { entryId, appId, subject, delta, balance, reason, at });
        return create(CoinsBalanceResultSchema, { subject, appId, balance, entryId });
      }),
    );
  }

  return {
    creditCoins: (request, call) => change(request, call, 1n),
    debitCoins: (request, call) => change(request, call, -1n),

    async transferCoins(request, call) {
      const principal = principalOf(call);
      const appId = coinsAppId(principal, request.appId);
      const { fromSubject: from, toSubject: to, amount } = request;
      if (from === to) throw invalid("to_subject", "A transfer moves coins between two different users.");
      const normalized: CoinsTransferRequest = { ...request, appId };
      const idempotency = idempotencyOf(call, normalized, { scope: `coins.transfer:${appId}:${principal.sub}` });
      return ctx.transaction((em) =>
        idempotency.run(em, async () => {
          const at = ctx.clock.now();
          const balances = await lockAccounts(em, appId, lockOrder(from, to), at);
          const transferId = newId("cnt");
          const reason = request.reason || "transfer";
          const entry = { appId, reason, transferId, at };
          const [fromBalance, toBalance] = [balances.get(from)!, balances.get(to)!];
          const debited = await applyChange(em, { ...entry, subject: from, delta: -amount, current: fromBalance });
          const credited = await applyChange(em, { ...entry, subject: to, delta: amount, current: toBalance });
          await coinsTransferred(em, { transferId, appId, fromSubject: from, toSubject: to, amount, at });
          return create(CoinsTransferResultSchema, {
            transferId,
            appId,
            from: { subject: from, balance: debited.balance },
            to: { subject: to, balance: credited.balance },
          });
        }),
      );
    },
  };
}
