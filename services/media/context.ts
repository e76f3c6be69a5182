import type { ServiceContext } from "../kit/service/module.js";
import { mediaQuotas, type MediaQuotas } from "./domain/quota.js";
import { mediaSettings, type MediaSettings } from "./settings.js";

/** Built once by the host: the service context (with its blob store), the media settings and the quotas they set. */
export interface MediaContext extends ServiceContext {
  settings: MediaSettings;
  quotas: MediaQuotas;
}

export function mediaContext(base: ServiceContext): MediaContext {
  const settings = mediaSettings(base.config);
  return { ...base, settings, quotas: mediaQuotas(settings) };
}
