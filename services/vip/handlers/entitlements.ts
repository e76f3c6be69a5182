import type { ServiceImpl } from "@connectrpc/connect";
import type { EntitlementCheckRequest } from "../../../gen/pf/vip/v1/memberships_pb.js";
import type { VipService } from "../../../gen/pf/vip/v1/vip_pb.js";
import { type Caller, callerOf } from "../../kit/auth/principal.js";
import { requireSubject } from "../../kit/handler/subjects.js";
import type { VipContext } from "../context.js";
import { entitlementFor } from "../db/projection.js";
import { requireOwner, requireSelfOrGrant } from "../domain/access.js";

type EntitlementHandlers = Pick<ServiceImpl<typeof VipService>, "checkEntitlement" | "postEntitlementCheck">;

/** Entitlement checks (GET and POST): billing's facts through this service's projection, by mode. */
export function entitlementHandlers(ctx: VipContext): EntitlementHandlers {
  async function check(request: EntitlementCheckRequest, caller: Caller) {
    const subject = requireSubject("subject", request.subject);
    const creator = requireOwner("creator", request.creator);
    requireSelfOrGrant(caller, [subject, creator], "the subject or the creator");
    return (await entitlementFor(ctx, subject, creator, request.mode)).result;
  }

  return {
    checkEntitlement: (request, call) => check(request, callerOf(call)),
    postEntitlementCheck: (request, call) => check(request, callerOf(call)),
  };
}
