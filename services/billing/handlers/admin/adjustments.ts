import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { AdminResultSchema, type BillingAdminService } from "../../../../gen/pf/billing/v1/admin_pb.js";
import { principalOf } from "../../../kit/auth/principal.js";
import { idempotencyOf } from "../../../kit/writes/idempotency.js";
import { invalid } from "../../../kit/handler/problem.js";
import type { BillingContext } from "../../context.js";
import { postAdjustment } from "../../db/adjustments.js";
import { holdImported, importHoldToProto } from "../../db/import-holds.js";
import { adjustmentMovements } from "../../domain/adjustments.js";
import { requireImportHold } from "../../domain/import-holds.js";
import { requireReason } from "../../domain/requests.js";

type AdjustmentHandlers = Pick<ServiceImpl<typeof BillingAdminService>, "postAdjustment">;

/** Manual adjustments and import holds (billing.ledger.admin): balanced, with a reason, applied once per idempotency key. */
export function adjustmentHandlers(ctx: BillingContext): AdjustmentHandlers {
  return {
    async postAdjustment(request, call) {
      const principal = principalOf(call);
      const reason = requireReason(request.reason);
      if (request.lines.length > 0 && request.importHold) {
        throw invalid("import_hold", "An adjustment has either lines or an import_hold, not both.");
      }
      const change = request.importHold
        ? { hold: requireImportHold(request.importHold) }
        : { movements: adjustmentMovements(request.lines) };
      const once = idempotencyOf(call, request, { scope: `adjustment:${principal.sub}`, required: true });
      return ctx.transaction((em) =>
        once.run(em, async () => {
          const act = { reason, by: principal.sub, at: ctx.clock.now() };
          if (change.hold) {
            const row = await holdImported(em, change.hold, act);
            return create(AdminResultSchema, { result: { case: "importHold", value: importHoldToProto(row) } });
          }
          const adjustment = await postAdjustment(em, {
            kind: "adjustment",
            movements: change.movements,
            reason,
            createdBy: act.by,
            at: act.at,
          });
          return create(AdminResultSchema, { result: { case: "adjustment", value: adjustment } });
        }),
      );
    },
  };
}
