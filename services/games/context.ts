import type { Client } from "@connectrpc/connect";
import { NetworkService } from "../../gen/pf/network/v1/network_pb.js";
import type { ServiceContext } from "../kit/service/module.js";
import { gamesSettings, type GamesSettings } from "./settings.js";

/** Built once per game-mods instance by the host: the service context, its settings and its network client. */
export interface GamesContext extends ServiceContext {
  settings: GamesSettings;
  /** Network's staff list decides whether a person's own token may manage mods. */
  network: Client<typeof NetworkService>;
}

export function gamesContext(base: ServiceContext): GamesContext {
  return { ...base, settings: gamesSettings(base.config), network: base.client(NetworkService) };
}
