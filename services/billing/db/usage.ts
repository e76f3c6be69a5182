import type { EntityManager } from "@mikro-orm/postgresql";
import { sql } from "../../kit/db/sql.js";

/** A usage record as stored. */
export interface StoredUsage {
  id: string;
  service: string;
  operation: string;
  unit: string;
  quantity: bigint;
  projectId: string;
  reference: string;
  payer: string;
  recordedAt: Date;
}

type UsageColumns = Omit<StoredUsage, "quantity" | "recordedAt"> & { quantity: string; recordedAt: string | Date };

const COLUMNS = `id, service, operation, unit, quantity, project_id as "projectId", reference, payer,
  recorded_at as "recordedAt"`;

const stored = (row: UsageColumns): StoredUsage => ({
  ...row,
  quantity: BigInt(row.quantity),
  recordedAt: new Date(row.recordedAt),
});

/**
 * Records a service's usage unless its (service, operation, reference) holds one already, and answers the record
 * and whether it is this one. A concurrent record of the same reference waits on the unique key until the first
 * commits, then finds it: one record, however many callers.
 */
export async function recordUsage(
  em: EntityManager,
  usage: StoredUsage,
): Promise<{ usage: StoredUsage; created: boolean }> {
  const [inserted] = await sql<UsageColumns>(
    em,
    `insert into {usage_records} (id, service, operation, unit, quantity, project_id, reference, payer, recorded_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?)
     on conflict (service, operation, reference) do nothing
     returning ${COLUMNS}`,
    [
      usage.id,
      usage.service,
      usage.operation,
      usage.unit,
      usage.quantity.toString(),
      usage.projectId,
      usage.reference,
      usage.payer,
      usage.recordedAt,
    ],
  );
  if (inserted) return { usage: stored(inserted), created: true };
  const [existing] = await sql<UsageColumns>(
    em,
    `select ${COLUMNS} from {usage_records} where service = ? and operation = ? and reference = ?`,
    [usage.service, usage.operation, usage.reference],
  );
  return { usage: stored(existing), created: false };
}
