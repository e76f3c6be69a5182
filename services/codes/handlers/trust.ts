import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { CodesService } from "../../../gen/pf/codes/v1/codes_pb.js";
import { TrustResultSchema } from "../../../gen/pf/codes/v1/releases_pb.js";
import { staffActor } from "../../kit/auth/principal.js";
import { invalid } from "../../kit/handler/problem.js";
import { maxLength } from "../../kit/handler/text.js";
import type { ServiceContext } from "../../kit/service/module.js";
import { setTrust, tierName, trustOf } from "../db/trust.js";
import { requireApp } from "../domain/releases.js";

/** Designed: platform staff record an app's trust tier. Metadata only: no code path reads it to decide anything. */
export function trustHandlers(ctx: ServiceContext): Pick<ServiceImpl<typeof CodesService>, "setTrust"> {
  return {
    async setTrust(request, call) {
      const app = requireApp(request.app);
      const tier = tierName(request.tier);
      if (tier === undefined)
        throw invalid("tier", "tier must be TRUST_TIER_UNREVIEWED, _REVIEWED, _VERIFIED or _FLAGGED");
      const note = maxLength("note", request.note.trim(), 500);
      const setBy = staffActor(call);
      return ctx.transaction(async (em) => {
        await setTrust(em, { app, tier, note, setBy, at: ctx.clock.now() });
        return create(TrustResultSchema, { trust: await trustOf(em, app) });
      });
    },
  };
}
