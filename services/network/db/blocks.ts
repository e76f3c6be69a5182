import { create } from "@bufbuild/protobuf";
import type { EntityManager } from "@mikro-orm/postgresql";
import { BlocksResultSchema, type BlocksResult } from "../../../gen/pf/network/v1/network_pb.js";
import { sql } from "../../kit/db/sql.js";
import { Block } from "./entities.js";

/** Who a person blocked and who blocked them, read in one piece (a block check needs the whole set). */
export async function blocksOf(em: EntityManager, subject: string): Promise<BlocksResult> {
  const [blocked, blockedBy] = await Promise.all([
    em.find(Block, { blocker: subject }, { orderBy: { blocked: "asc" } }),
    em.find(Block, { blocked: subject }, { orderBy: { blocker: "asc" } }),
  ]);
  return create(BlocksResultSchema, {
    subject,
    blocked: blocked.map((b) => b.blocked),
    blockedBy: blockedBy.map((b) => b.blocker),
  });
}

/** Records a block unless it exists (two at once: the primary key keeps one); true when this call recorded it. */
export async function insertBlock(em: EntityManager, blocker: string, blocked: string, at: Date): Promise<boolean> {
  const created = await sql(
    em,
    `insert into {blocks} (blocker, blocked, created_at) values (?, ?, ?)
     on conflict do nothing returning blocker`,
    [blocker, blocked, at],
  );
  return created.length > 0;
}

/** Removes a block; true when there was one. */
export async function deleteBlock(em: EntityManager, blocker: string, blocked: string): Promise<boolean> {
  return (await em.nativeDelete(Block, { blocker, blocked })) > 0;
}
