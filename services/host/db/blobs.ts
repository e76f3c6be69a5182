import type { EntityManager } from "@mikro-orm/postgresql";
import { sql } from "../../kit/db/sql.js";

/**
 * Records a blob before its bytes are put (its own statement, outside any transaction), so the sweep finds what a
 * crash left. A blob already recorded is touched: its age starts again, so the sweep spares it while this upload
 * runs though no deploy names it yet; one the sweep holds is waited for, then recorded anew.
 */
export async function recordBlob(em: EntityManager, digest: string, size: number, at: Date): Promise<void> {
  await sql(
    em,
    `insert into {blobs} (digest, size, created_at) values (?, ?, ?)
     on conflict (digest) do update set created_at = greatest({blobs}.created_at, excluded.created_at)`,
    [digest, size, at],
  );
}

/** Of these digests, those still recorded, held against the sweep until the caller's transaction ends. */
export async function heldBlobs(em: EntityManager, digests: string[]): Promise<Set<string>> {
  const held = new Set<string>();
  for (let at = 0; at < digests.length; at += BATCH) {
    const rows = await sql<{ digest: string }>(
      em,
      `select digest from {blobs} where digest in (?) order by digest for share`,
      [digests.slice(at, at + BATCH)],
    );
    for (const row of rows) held.add(row.digest);
  }
  return held;
}

/** Digests per statement: a statement's parameters are bounded. */
const BATCH = 5000;

/** Up to `limit` blobs recorded before `before` that no deploy file names. */
export async function sweepableBlobs(em: EntityManager, before: Date, limit: number): Promise<string[]> {
  const rows = await sql<{ digest: string }>(
    em,
    `select b.digest from {blobs} b where b.created_at < ? and ${UNREFERENCED} order by b.digest limit ?`,
    [before, limit],
  );
  return rows.map((row) => row.digest);
}

/**
 * Takes blobs for removal in the caller's transaction: locked first, then found still unreferenced and old by a
 * statement of its own (it sees what committed while it waited: a deploy naming one, an upload touching one).
 */
export async function claimBlobs(em: EntityManager, digests: string[], before: Date): Promise<string[]> {
  if (digests.length === 0) return [];
  await sql(em, `select digest from {blobs} where digest in (?) order by digest for update`, [digests]);
  const rows = await sql<{ digest: string }>(
    em,
    `select b.digest from {blobs} b where b.digest in (?) and b.created_at < ? and ${UNREFERENCED}`,
    [digests, before],
  );
  return rows.map((row) => row.digest);
}

export async function deleteBlobRows(em: EntityManager, digests: string[]): Promise<void> {
  if (digests.length === 0) return;
  await sql(em, `delete from {blobs} where digest in (?)`, [digests]);
}

/** No deploy file names blob `b`, as its bytes or as one of their encodings (one anti-join for the statement). */
const UNREFERENCED = `not exists (
  select 1 from (
    select f.digest from {deploy_files} f
    union all
    select e.value->>'digest' from {deploy_files} f, jsonb_each(f.encodings) e
  ) named where named.digest = b.digest)`;
