import type { ServiceContext } from "../kit/runtime/module.js";
import { Sealer } from "../kit/runtime/sealer.js";
import { communitySettings, type CommunitySettings } from "./settings.js";

/** Built once per community instance by the host: the service context, its settings and the sealer (relay webhooks). */
export interface CommunityContext extends ServiceContext {
  settings: CommunitySettings;
  sealer: Sealer;
}

export async function communityContext(base: ServiceContext): Promise<CommunityContext> {
  return { ...base, settings: communitySettings(base.config), sealer: await Sealer.load(base.config) };
}
