import type { EntityManager } from "@mikro-orm/postgresql";
import { ProbeLogRow } from "./entities.js";

/** One probe run as the abuse log keeps it: keyed hashes of its caller and target, never either itself. */
export interface ProbeLogEntry {
  tool: string;
  callerHash: string;
  targetHash: string;
  /** started (while it runs), succeeded, failed, refused (aimed inside) or throttled. */
  outcome: string;
  at: Date;
}

/** Writes a probe run to the abuse log; answers its row's id. */
export async function insertProbeLog(em: EntityManager, entry: ProbeLogEntry): Promise<string> {
  const row = em.create(ProbeLogRow, entry);
  await em.flush();
  return row.id;
}

/** Records how a logged run ended. */
export async function endProbeLog(em: EntityManager, id: string, outcome: string): Promise<void> {
  await em.nativeUpdate(ProbeLogRow, { id }, { outcome });
}
