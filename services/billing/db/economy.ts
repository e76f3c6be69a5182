import { LockMode, type EntityManager } from "@mikro-orm/postgresql";
import { EconomyRow } from "./entities.js";

/** The economy freeze switch: its one row, locked for a change when asked. */
export function economyRow(em: EntityManager, lock = false): Promise<EconomyRow> {
  return em.findOneOrFail(EconomyRow, { id: 1 }, lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {});
}

/** Freezes or thaws the economy (the locked switch), saying who did it, why and when. */
export async function setFreeze(
  em: EntityManager,
  row: EconomyRow,
  change: { frozen: boolean; reason: string; changedBy: string; changedAt: Date },
): Promise<void> {
  Object.assign(row, change);
  await em.flush();
}
