import type { JobTool } from "./tool.js";

/** The job tools (img.process, audio.process, docs.process), by id. */
export const fileTools: Record<string, JobTool> = {};
