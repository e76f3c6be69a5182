import type { EntityManager } from "@mikro-orm/postgresql";
import { sql } from "../../kit/db/sql.js";
import { newId } from "../../kit/handler/ids.js";

/** One change to audit: its actor (the token's subject), action, target, and the target before and after. */
export interface AuditedChange {
  actor: string;
  /** `provider.registered`, `model.updated`, `quota.set`, `cache.purged`, `workflow.status_changed`… */
  action: string;
  targetKind: "provider" | "model" | "quota" | "cache" | "prompt" | "workflow" | "route";
  targetKey: string;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  at: Date;
}

/** Writes the change to the audit log in the transaction that made it: no change without its entry. */
export async function recordAudit(em: EntityManager, change: AuditedChange): Promise<void> {
  await sql(
    em,
    `insert into {audit_log} (id, actor, action, target_kind, target_key, before, after, at)
     values (?, ?, ?, ?, ?, ?::jsonb, ?::jsonb, ?)`,
    [
      newId("aud"),
      change.actor,
      change.action,
      change.targetKind,
      change.targetKey,
      change.before === null ? null : JSON.stringify(change.before),
      change.after === null ? null : JSON.stringify(change.after),
      change.at,
    ],
  );
}
