import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import { type AuditEntry, AuditEntrySchema } from "../../../gen/pf/games/v1/mods_pb.js";
import { statusToProto } from "../domain/vocabulary.js";
import { ModAuditRow } from "./entities.js";

/** Records one manage action (insert-only), in the transaction of the change. */
export async function insertAudit(em: EntityManager, row: ModAuditRow): Promise<void> {
  em.create(ModAuditRow, row);
  await em.flush();
}

/** Up to `rows` audit entries of an install, newest first, below the cursor's revision. */
export function auditOf(em: EntityManager, installId: string, below: number | undefined, rows: number) {
  return em.find(ModAuditRow, below === undefined ? { installId } : { installId, revision: { $lt: below } }, {
    orderBy: { revision: "desc" },
    limit: rows,
  });
}

/** An audit entry as the audit route answers it. */
export function auditToProto(row: ModAuditRow): AuditEntry {
  return create(AuditEntrySchema, {
    id: row.id,
    revision: row.revision,
    action: row.action,
    capability: row.capability,
    actor: row.actor,
    actingFor: row.actingFor,
    admittedBy: row.admittedBy,
    staffRole: row.staffRole,
    reason: row.reason,
    status: statusToProto(row.status),
    at: timestampFromDate(row.at),
  });
}
