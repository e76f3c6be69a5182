import { create, fromJson, toJson, type JsonValue } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  AdminResultSchema,
  ReconciliationSchema,
  type BillingAdminService,
  type Reconciliation,
} from "../../../../gen/pf/billing/v1/admin_pb.js";
import { principalOf } from "../../../kit/auth/principal.js";
import { newId } from "../../../kit/handler/ids.js";
import { problem } from "../../../kit/handler/problem.js";
import type { BillingContext } from "../../context.js";
import { reconciliationById, recordReconciliation, runChecks } from "../../db/reconciliation.js";
import { reconciliationReport } from "../../domain/reconciliation.js";

type ReconciliationHandlers = Pick<ServiceImpl<typeof BillingAdminService>, "runReconciliation" | "getReconciliation">;

/**
 * Reconciliation runs (billing.ledger.admin): every check over one snapshot,
 * the report stored for later reads. A run writes no money, so it also runs
 * while the economy is frozen, when it is needed most.
 */
export function reconciliationHandlers(ctx: BillingContext): ReconciliationHandlers {
  const result = (reconciliation: Reconciliation) =>
    create(AdminResultSchema, { result: { case: "reconciliation", value: reconciliation } });
  return {
    async runReconciliation(_request, call) {
      const principal = principalOf(call);
      const reconciliation = await ctx.transaction(async (em) => {
        const { findings, checked } = await runChecks(em);
        const run = { id: newId("rec"), ranAt: ctx.clock.now(), ranBy: principal.sub };
        const report = reconciliationReport(run, findings, checked);
        recordReconciliation(em, {
          ...run,
          balanced: report.balanced,
          report: toJson(ReconciliationSchema, report),
        });
        return report;
      });
      return result(reconciliation);
    },

    async getReconciliation(request) {
      const row = await reconciliationById(ctx.orm.em.fork(), request.id);
      if (!row) throw problem(404, "reconciliation.not_found", `There is no reconciliation run ${request.id}.`);
      return result(fromJson(ReconciliationSchema, row.report as JsonValue));
    },
  };
}
