import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import { BlocksResultSchema, type BlocksResult, type NetworkService } from "../../../gen/pf/network/v1/network_pb.js";
import type { ServiceContext } from "../../kit/runtime/module.js";
import { Block } from "../db/entities.js";
import { requireUser } from "../../kit/handler/subjects.js";

/** Who a person blocked and who blocked them, read in one piece (a block check needs the whole set). */
export async function blocksOf(em: EntityManager, subject: string): Promise<BlocksResult> {
  const [blocked, blockedBy] = await Promise.all([
    em.find(Block, { blocker: subject }, { orderBy: { blocked: "asc" } }),
    em.find(Block, { blocked: subject }, { orderBy: { blocker: "asc" } }),
  ]);
  return create(BlocksResultSchema, { subject, blocked: blocked.map((b) => b.blocked), blockedBy: blockedBy.map((b) => b.blocker) });
}

export function blocksHandlers(ctx: ServiceContext): Pick<ServiceImpl<typeof NetworkService>, "getBlocks"> {
  return {
    async getBlocks(request) {
      return blocksOf(ctx.orm.em.fork(), requireUser("subject", request.subject));
    },
  };
}
