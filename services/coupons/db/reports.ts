import type { EntityManager } from "@mikro-orm/postgresql";
import { newId } from "../../kit/handler/ids.js";
import { ReportRow } from "./entities.js";

/** Whether a person reported a code on this UTC day already. */
export async function reportedOn(em: EntityManager, couponId: string, reporter: string, day: string): Promise<boolean> {
  return (await em.count(ReportRow, { couponId, reporter, day })) > 0;
}

/** Records a person's report of a code: it becomes their latest, the one that counts. */
export async function recordReport(
  em: EntityManager,
  report: { couponId: string; reporter: string; outcome: string; day: string; at: Date },
): Promise<void> {
  const { couponId, reporter } = report;
  await em.nativeUpdate(ReportRow, { couponId, reporter, latest: true }, { latest: false });
  em.create(ReportRow, {
    id: newId("crp"),
    couponId,
    reporter,
    outcome: report.outcome,
    day: report.day,
    latest: true,
    createdAt: report.at,
  });
  await em.flush();
}
