import type { InlineTool } from "./tool.js";

/** The inline tools of the text family, by id. */
export const textTools: Record<string, InlineTool> = {};
