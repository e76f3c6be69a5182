import type { CallOptions, Client } from "@connectrpc/connect";
import type { VipService } from "../../../gen/pf/vip/v1/vip_pb.js";
import type { Logger } from "../runtime/logger.js";

/**
 * Whether vip makes `subject` a member of `creator`'s membership (the members-only gate of space's spaces and
 * blog's posts). Unknown never authorizes: vip not answering, or answering anything but yes, is no (logged).
 */
export async function vipMember(
  vip: Client<typeof VipService>,
  logger: Logger,
  asked: { subject: string; creator: string },
  options: CallOptions = {},
): Promise<boolean> {
  try {
    return (await vip.checkEntitlement(asked, options)).member;
  } catch (error) {
    logger.warn(
      { err: error, creator: asked.creator },
      "vip did not answer the entitlement check; the gate stays closed",
    );
    return false;
  }
}
