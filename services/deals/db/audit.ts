import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import { type AuditEntry, AuditEntrySchema } from "../../../gen/pf/deals/v1/moderation_pb.js";
import { newId } from "../../kit/handler/ids.js";
import { AuditRow } from "./entities.js";

export type AuditAction = "disable" | "enable" | "review" | "resolve_flag" | "expire" | "merge" | "unmerge";

/** Writes one entry of the moderation audit in the caller's transaction. */
export async function audit(
  em: EntityManager,
  entry: {
    action: AuditAction;
    offerId: string;
    flagId?: string;
    actor: string;
    reason: string;
    details?: Record<string, unknown>;
    at: Date;
  },
): Promise<AuditEntry> {
  const row = em.create(AuditRow, {
    id: newId("mod"),
    action: entry.action,
    offerId: entry.offerId,
    flagId: entry.flagId ?? null,
    actor: entry.actor,
    reason: entry.reason,
    details: entry.details ?? {},
    createdAt: entry.at,
  });
  await em.flush();
  return create(AuditEntrySchema, {
    id: row.id,
    action: row.action,
    offerId: row.offerId,
    flagId: row.flagId ?? "",
    actor: row.actor,
    reason: row.reason,
    createdAt: timestampFromDate(row.createdAt),
  });
}
