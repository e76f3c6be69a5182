import { outboundSettings, type OutboundSettings } from "../kit/outbound/fetch.js";
import { Sealer } from "../kit/runtime/sealer.js";
import type { ServiceContext } from "../kit/service/module.js";
import { restreamSettings, type RestreamSettings } from "./settings.js";

/** Built once per restream instance by the host: settings, the sealer of destination keys, the outbound rules. */
export interface RestreamContext extends ServiceContext {
  settings: RestreamSettings;
  /** Seals destination stream keys and passphrases at rest. */
  sealer: Sealer;
  /** The kit's outbound rules (PF_FETCH_ALLOW_HOSTS, tests only): destinations are judged by them at write, start and test. */
  outbound: OutboundSettings;
}

export async function restreamContext(base: ServiceContext): Promise<RestreamContext> {
  return {
    ...base,
    settings: restreamSettings(base.config),
    sealer: await Sealer.load(base.config),
    outbound: outboundSettings(base.config),
  };
}
