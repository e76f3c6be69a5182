import type { Client } from "@connectrpc/connect";
import { NetworkService } from "../../gen/pf/network/v1/network_pb.js";
import type { ServiceContext } from "../kit/service/module.js";
import { hostSettings, type HostSettings } from "./settings.js";

/** Built once per static-hosting instance by the host: the service context, its settings and clients. */
export interface HostContext extends ServiceContext {
  settings: HostSettings;
  /** Network, called with host's own token (network.staff.read): its staff list, for quota changes and takedowns. */
  network: Client<typeof NetworkService>;
}

export function hostContext(base: ServiceContext): HostContext {
  return { ...base, settings: hostSettings(base.config), network: base.client(NetworkService) };
}
