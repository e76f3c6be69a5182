import type { InlineTool } from "../tool.js";

/** The network probe tools, by id. */
export const netTools: Record<string, InlineTool> = {};
