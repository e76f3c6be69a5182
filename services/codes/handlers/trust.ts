import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { CodesService } from "../../../gen/pf/codes/v1/codes_pb.js";
import { TrustResultSchema } from "../../../gen/pf/codes/v1/releases_pb.js";
import { staffActor } from "../../kit/auth/principal.js";
import type { ServiceContext } from "../../kit/service/module.js";
import { setTrust, tierName, trustOf } from "../db/trust.js";

/** Designed: platform staff record an app's trust tier. Metadata only: no code path reads it to decide anything. */
export function trustHandlers(ctx: ServiceContext): Pick<ServiceImpl<typeof CodesService>, "setTrust"> {
  return {
    async setTrust(request, call) {
      // The contract holds app to its shape, tier to a tier TrustTier defines and note to 500 characters.
      const { app } = request;
      const tier = tierName(request.tier)!;
      const note = request.note.trim();
      const setBy = staffActor(call);
      return ctx.transaction(async (em) => {
        await setTrust(em, { app, tier, note, setBy, at: ctx.clock.now() });
        return create(TrustResultSchema, { trust: await trustOf(em, app) });
      });
    },
  };
}
