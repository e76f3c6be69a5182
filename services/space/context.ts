import type { Client } from "@connectrpc/connect";
import { NetworkService } from "../../gen/pf/network/v1/network_pb.js";
import { VipService } from "../../gen/pf/vip/v1/vip_pb.js";
import type { ServiceContext } from "../kit/service/module.js";
import { spaceSettings, type SpaceSettings } from "./settings.js";

/** Built once per forum instance by the host: the service context, its settings, and the clients of its gates. */
export interface SpaceContext extends ServiceContext {
  settings: SpaceSettings;
  /** The members-only gate: vip's entitlement check. */
  vip: Client<typeof VipService>;
  /** Network's staff list: a person's own token is a moderator only when it names them. */
  network: Client<typeof NetworkService>;
}

export function spaceContext(base: ServiceContext): SpaceContext {
  return {
    ...base,
    settings: spaceSettings(base.config),
    vip: base.client(VipService),
    network: base.client(NetworkService),
  };
}
