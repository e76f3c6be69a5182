import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  AdminResultSchema,
  SweepReportSchema,
  type BillingAdminService,
} from "../../../../gen/pf/billing/v1/admin_pb.js";
import { principalOf } from "../../../kit/auth/principal.js";
import type { BillingContext } from "../../context.js";
import { requireThawed } from "../../db/ledger.js";
import { sweepRenewals } from "../../workers/renewals.js";

/** Runs the renewal sweep now (billing.ledger.admin); it also runs on its own as a leased job. */
export function sweepHandlers(ctx: BillingContext): Pick<ServiceImpl<typeof BillingAdminService>, "runSweep"> {
  return {
    async runSweep(_request, call) {
      // Asked for explicitly, a sweep the freeze would make a no-op is refused like any write (409 economy.frozen).
      await requireThawed(ctx.orm.em.fork());
      const ranAt = ctx.clock.now();
      const { renewed, ended } = await sweepRenewals(ctx, principalOf(call).sub);
      return create(AdminResultSchema, {
        result: {
          case: "sweep",
          value: create(SweepReportSchema, {
            ranAt: timestampFromDate(ranAt),
            renewed: BigInt(renewed),
            ended: BigInt(ended),
          }),
        },
      });
    },
  };
}
