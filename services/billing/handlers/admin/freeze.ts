import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import {
  AdminResultSchema,
  EconomySchema,
  type BillingAdminService,
  type Economy,
} from "../../../../gen/pf/billing/v1/admin_pb.js";
import { principalOf } from "../../../kit/auth/principal.js";
import type { BillingContext } from "../../context.js";
import { economyRow, setFreeze } from "../../db/economy.js";
import type { EconomyRow } from "../../db/entities.js";
import { heldEventCount } from "../../db/provider-events.js";
import { requireReason } from "../../domain/requests.js";
import { economyChanged } from "../../events.js";
import { applyProviderEvents } from "../../workers/provider-events.js";

type FreezeHandlers = Pick<ServiceImpl<typeof BillingAdminService>, "getFreeze" | "setFreeze">;

/**
 * The economy freeze switch (billing.ledger.admin). While frozen, the ledger
 * refuses every write (db/ledger.ts), reads are served and provider webhooks
 * are held; the switch itself stays usable, so a thaw is always possible.
 */
export function freezeHandlers(ctx: BillingContext): FreezeHandlers {
  const result = (economy: Economy) => create(AdminResultSchema, { result: { case: "economy", value: economy } });
  return {
    async getFreeze() {
      const em = ctx.orm.em.fork();
      return result(await economyOf(em, await economyRow(em)));
    },

    async setFreeze(request, call) {
      const frozen = request.frozen!; // required: declared
      const reason = requireReason(request.reason);
      const principal = principalOf(call);
      const { economy, thawed } = await ctx.transaction(async (em) => {
        const row = await economyRow(em, true);
        // Setting the state it already has changes nothing, not even who set it and why.
        if (row.frozen === frozen) return { economy: await economyOf(em, row), thawed: false };
        const at = ctx.clock.now();
        await setFreeze(em, row, { frozen, reason, changedBy: principal.sub, changedAt: at });
        const economy = await economyOf(em, row);
        await economyChanged(em, economy, at);
        return { economy, thawed: !frozen };
      });
      if (thawed) {
        // The webhooks held while frozen are applied now, in order; the thaw stands even if that fails (a worker retries).
        await applyProviderEvents(ctx).catch((error: unknown) =>
          ctx.logger.error({ err: error }, "applying the provider events held while frozen failed"),
        );
      }
      return result(economy);
    },
  };
}

/** The switch as answered: with the number of provider events held for the thaw. */
async function economyOf(em: EntityManager, row: EconomyRow): Promise<Economy> {
  const held = await heldEventCount(em);
  return create(EconomySchema, {
    frozen: row.frozen,
    reason: row.reason,
    changedBy: row.changedBy,
    changedAt: timestampFromDate(row.changedAt),
    heldEvents: BigInt(held),
  });
}
