import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { UniqueConstraintViolationException } from "@mikro-orm/postgresql";
import { ReportOutcome, ReportResultSchema, type CouponsService } from "../../../gen/pf/coupons/v1/coupons_pb.js";
import { actingPerson, principalOf } from "../../kit/auth/principal.js";
import type { ServiceContext } from "../../kit/service/module.js";
import { problem } from "../../kit/handler/problem.js";
import { rateLimit } from "../../kit/writes/rate-limit.js";
import { couponAnswer, lockReportableCoupon, reportsOf, STATUS_TO_PROTO, statusOf } from "../db/coupons.js";
import { merchantApproved } from "../db/merchants.js";
import { recordReport, reportedOn } from "../db/reports.js";
import { utcDay } from "../domain/confidence.js";
import { codeReported, codeStatusChanged } from "../events.js";
import { reportRule } from "../settings.js";
import { codeNotFound } from "./lookups.js";

const OUTCOMES = { [ReportOutcome.WORKED]: "worked", [ReportOutcome.FAILED]: "failed" } as const;

const duplicate = (day: string) =>
  problem(
    409,
    "coupons.report.duplicate",
    `This person already reported this code on ${day} (UTC); the next report may be made the day after.`,
    { day },
  );

/**
 * Worked/failed reports by people: one per person, code and UTC day; each
 * person's latest report is the one that counts. AI output is refused.
 */
export function reportHandlers(ctx: ServiceContext): Pick<ServiceImpl<typeof CouponsService>, "reportCoupon"> {
  return {
    async reportCoupon(request, call) {
      if (principalOf(call).origin === "ai") {
        throw problem(
          403,
          "coupons.report.ai_refused",
          "Reports are made by people: AI output (X-PF-Origin: ai) is refused.",
        );
      }
      // A network user (ACTOR_MEMBER): guests and callers acting for nobody never get here.
      const reporter = actingPerson(call);
      const outcome = OUTCOMES[request.outcome as keyof typeof OUTCOMES]; // worked or failed: declared
      return ctx.transaction(async (em) => {
        const at = ctx.clock.now();
        const day = utcDay(at);
        await rateLimit(em, [reportRule(reporter)], at);
        // The code's lock orders its reports, so each person keeps one latest report.
        const row = await lockReportableCoupon(em, request.id);
        if (!row || !(await merchantApproved(em, row.merchantId))) throw codeNotFound();
        const before = statusOf(row, (await reportsOf(em, [row.id])).get(row.id), at).status;
        if (before === "expired")
          throw problem(409, "coupons.code.expired", "This code has expired: it takes no more reports.");
        if (await reportedOn(em, row.id, reporter, day)) throw duplicate(day);
        await recordReport(em, { couponId: row.id, reporter, outcome, day, at }).catch((error: unknown) => {
          throw error instanceof UniqueConstraintViolationException ? duplicate(day) : error;
        });
        const coupon = await couponAnswer(em, row, at);
        await codeReported(em, coupon, request.outcome, at);
        if (coupon.status !== STATUS_TO_PROTO[before])
          await codeStatusChanged(
            em,
            coupon,
            { previous: STATUS_TO_PROTO[before], reason: "report", changedBy: "" },
            at,
          );
        return create(ReportResultSchema, { coupon, day });
      });
    },
  };
}
