import type { ServiceImpl } from "@connectrpc/connect";
import type { NetworkService } from "../../../gen/pf/network/v1/network_pb.js";
import type { NetworkContext } from "../context.js";

/** The staff list: who moderates, for owning services to show or to route a report (answered from memory). */
export function staffHandlers(ctx: NetworkContext): Pick<ServiceImpl<typeof NetworkService>, "listStaff"> {
  return {
    listStaff: () => ctx.staffList.read(),
  };
}
