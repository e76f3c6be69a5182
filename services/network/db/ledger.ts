import type { EntityManager } from "@mikro-orm/postgresql";
import { sql } from "../../kit/db/sql.js";
import { newId } from "../../kit/handler/ids.js";
import { balanceAfter } from "../domain/coins.js";
import { CoinEntry } from "./entities.js";

/** One applied change of one account: the entry written and the balance after it. */
export interface Applied {
  entryId: string;
  balance: bigint;
}

/** Locks the accounts (creating empty ones) in the order given, inside the caller's transaction. */
export async function lockAccounts(
  em: EntityManager,
  appId: string,
  subjects: string[],
  at: Date,
): Promise<Map<string, bigint>> {
  const balances = new Map<string, bigint>();
  for (const subject of subjects) {
    await sql(
      em,
      `insert into {coin_accounts} (app_id, subject, balance, updated_at) values (?, ?, 0, ?) on conflict do nothing`,
      [appId, subject, at],
    );
    const [row] = await sql<{ balance: string }>(
      em,
      `select balance from {coin_accounts} where app_id = ? and subject = ? for update`,
      [appId, subject],
    );
    balances.set(subject, BigInt(row.balance));
  }
  return balances;
}

/**
 * Applies a signed change to a locked account and writes its immutable entry.
 * A debit past zero is refused here (409 insufficient_funds) and by the
 * table's check constraint.
 */
export async function applyChange(
  em: EntityManager,
  change: {
    appId: string;
    subject: string;
    delta: bigint;
    current: bigint;
    reason: string;
    transferId?: string;
    at: Date;
  },
): Promise<Applied> {
  const balance = balanceAfter(change.subject, change.current, change.delta);
  await sql(em, `update {coin_accounts} set balance = ?, updated_at = ? where app_id = ? and subject = ?`, [
    balance.toString(),
    change.at,
    change.appId,
    change.subject,
  ]);
  const entryId = newId("cne");
  await em.insert(CoinEntry, {
    id: entryId,
    appId: change.appId,
    subject: change.subject,
    delta: change.delta,
    balanceAfter: balance,
    reason: change.reason,
    transferId: change.transferId ?? null,
    createdAt: change.at,
  });
  return { entryId, balance };
}
