import type { ServiceContext } from "../kit/runtime/module.js";
import { mediaSettings, type MediaSettings } from "./settings.js";

/** Built once by the host: the service context (with its blob store) and the media settings. */
export interface MediaContext extends ServiceContext {
  settings: MediaSettings;
}

export function mediaContext(base: ServiceContext): MediaContext {
  return { ...base, settings: mediaSettings(base.config) };
}
