import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import { AuditEntrySchema, type AuditEntry } from "../../../gen/pf/bot/v1/robots_pb.js";
import { newId } from "../../kit/handler/ids.js";
import { AuditRow } from "./entities.js";

/** What an audit entry records beyond its robot and time. */
export interface Audited {
  action: string;
  actor: string;
  actingFor?: string;
  target?: string;
  detail?: string;
  refusal?: string;
}

/**
 * Records one action on a robot (insert-only), in the transaction of the change (`ctx.transaction`, whose flush
 * writes it with the change's other rows); answers its id.
 */
export function audit(em: EntityManager, robotId: string, entry: Audited, at: Date): string {
  const id = newId("aud");
  em.create(AuditRow, {
    id,
    robotId,
    action: entry.action,
    actor: entry.actor,
    actingFor: entry.actingFor ?? "",
    target: entry.target ?? "",
    detail: entry.detail ?? "",
    refusal: entry.refusal ?? "",
    at,
  });
  return id;
}

/** Up to `rows` audit entries of a robot, newest first, before the `before` id ("" from the newest). */
export function auditPage(em: EntityManager, robotId: string, before: string, rows: number): Promise<AuditRow[]> {
  return em.find(AuditRow, before === "" ? { robotId } : { robotId, id: { $lt: before } }, {
    orderBy: { id: "desc" },
    limit: rows,
  });
}

/** An audit entry as the audit route answers it. */
export function auditToProto(row: AuditRow): AuditEntry {
  return create(AuditEntrySchema, {
    id: row.id,
    robotId: row.robotId,
    action: row.action,
    actor: row.actor,
    actingFor: row.actingFor,
    target: row.target,
    detail: row.detail,
    refusal: row.refusal,
    at: timestampFromDate(row.at),
  });
}
