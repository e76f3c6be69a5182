import type { ServiceContext } from "../kit/service/module.js";
import { Listeners } from "../kit/runtime/wakes.js";
import { aiSettings, type AiSettings } from "./settings.js";

/** Built once per AI instance by the host: settings and what this process runs. */
export interface AiContext extends ServiceContext {
  settings: AiSettings;
  /** Runs executing in this process, by id: canceling one aborts its provider call at once. */
  running: Map<string, AbortController>;
  /** Tells this process's waiters on a run (a call waiting wait_ms, a chat stream) that it changed. */
  news: Listeners;
}

export function aiContext(base: ServiceContext): AiContext {
  return { ...base, settings: aiSettings(base.config), running: new Map(), news: new Listeners() };
}
