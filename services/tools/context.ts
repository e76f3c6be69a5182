import type { Client } from "@connectrpc/connect";
import { MediaService } from "../../gen/pf/media/v1/media_pb.js";
import type { ServiceContext } from "../kit/service/module.js";
import { Catalogue } from "./catalogue/index.js";
import { Listeners } from "../kit/runtime/wakes.js";
import { ToolSchemas } from "./domain/run/schemas.js";
import { liveStatus, type LiveStatus } from "./families/live.js";
import { toolsSettings, type ToolsSettings } from "./settings.js";

/** Built once per tools instance by the host: settings, the catalogue, what runs here (live status), clients. */
export interface ToolsContext extends ServiceContext {
  settings: ToolsSettings;
  catalogue: Catalogue;
  /** Each tool's live status, from what runs it in this process (sharp loads, FFmpeg answers, a binary exists). */
  live: LiveStatus;
  /** Every served tool's input and output schemas, compiled once. */
  schemas: ToolSchemas;
  /** Tells this process's watchers of a job (event streams, waiting runs, its executor) that it changed. */
  news: Listeners;
  /** Media, called with tools' own token (media.object.read): a JSON job's input files by key. */
  media: Client<typeof MediaService>;
}

export async function toolsContext(base: ServiceContext): Promise<ToolsContext> {
  const settings = toolsSettings(base.config);
  const catalogue = new Catalogue();
  return {
    ...base,
    settings,
    catalogue,
    live: await liveStatus(settings, catalogue),
    schemas: new ToolSchemas(catalogue.tools),
    news: new Listeners(),
    media: base.client(MediaService),
  };
}
