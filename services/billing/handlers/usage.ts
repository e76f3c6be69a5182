import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  type BillingUsageService,
  UsageRecordResultSchema,
  UsageRecordSchema,
} from "../../../gen/pf/billing/v1/usage_pb.js";
import { principalOf } from "../../kit/auth/principal.js";
import { newId } from "../../kit/handler/ids.js";
import { problem } from "../../kit/handler/problem.js";
import { answerStatus } from "../../kit/handler/status.js";
import type { BillingContext } from "../context.js";
import { recordUsage, type StoredUsage } from "../db/usage.js";
import { usageDifferences } from "../domain/usage.js";

type UsageHandlers = Pick<ServiceImpl<typeof BillingUsageService>, "recordUsage">;

/** Metered usage (designed): the quantities a service's operations used, recorded once per reference. */
export function usageHandlers(ctx: BillingContext): UsageHandlers {
  return {
    async recordUsage(request, call) {
      const principal = principalOf(call);
      // The access rule admits only the job-run service's token: the metered service is the caller, and it pays.
      const asked: StoredUsage = {
        id: newId("usg"),
        service: principal.service ?? "",
        operation: request.operation,
        unit: request.unit,
        quantity: request.quantity,
        projectId: request.projectId,
        reference: request.reference,
        payer: principal.sub,
        recordedAt: ctx.clock.now(),
      };
      const { usage, created } = await ctx.transaction((em) => recordUsage(em, asked));
      if (!created) {
        const differ = usageDifferences(usage, asked);
        if (differ.length > 0)
          throw problem(
            409,
            "idempotency.mismatch",
            `This reference's usage was recorded with another ${differ.join(", ")}.`,
            { fields: differ },
          );
        answerStatus(call, 200);
      }
      return create(UsageRecordResultSchema, {
        usage: create(UsageRecordSchema, {
          id: usage.id,
          service: usage.service,
          operation: usage.operation,
          unit: usage.unit,
          quantity: usage.quantity,
          projectId: usage.projectId,
          reference: usage.reference,
          payer: usage.payer,
          recordedAt: timestampFromDate(usage.recordedAt),
        }),
      });
    },
  };
}
