import type { InlineTool } from "./tool.js";

/** The inline tools of the data family, by id. */
export const dataTools: Record<string, InlineTool> = {};
