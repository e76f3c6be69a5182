import type { Client } from "@connectrpc/connect";
import { AiService } from "../../gen/pf/ai/v1/ai_pb.js";
import type { ContentGate } from "../kit/rpc/content-access.js";
import type { ServiceContext } from "../kit/service/module.js";
import { Sealer } from "../kit/runtime/sealer.js";
import { contentGates } from "./contents.js";
import { communitySettings, type CommunitySettings } from "./settings.js";

/**
 * Built once per community instance by the host: the service context, its settings, the sealer (relay webhooks)
 * and the content gates of comment threads (`contents.ts`).
 */
export interface CommunityContext extends ServiceContext {
  settings: CommunitySettings;
  sealer: Sealer;
  /** By a thread ref's service, what a reader may see of the content the thread belongs to. */
  contents: ReadonlyMap<string, ContentGate>;
  /** The run AI output names, verified (ai.run.read). */
  ai: Client<typeof AiService>;
}

export async function communityContext(base: ServiceContext): Promise<CommunityContext> {
  return {
    ...base,
    settings: communitySettings(base.config),
    sealer: await Sealer.load(base.config),
    contents: contentGates(base),
    ai: base.client(AiService),
  };
}
