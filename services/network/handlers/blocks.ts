import type { ServiceImpl } from "@connectrpc/connect";
import type { NetworkService } from "../../../gen/pf/network/v1/network_pb.js";
import type { ServiceContext } from "../../kit/service/module.js";
import { blocksOf } from "../db/blocks.js";

/** The block read, for services that honour platform blocks. */
export function blocksHandlers(ctx: ServiceContext): Pick<ServiceImpl<typeof NetworkService>, "getBlocks"> {
  return {
    async getBlocks(request) {
      return blocksOf(ctx.orm.em.fork(), request.subject);
    },
  };
}
