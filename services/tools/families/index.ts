import { dataTools } from "./data.js";
import { fileTools } from "./files.js";
import { netTools } from "./net/index.js";
import { textTools } from "./text.js";
import type { InlineTool, JobTool } from "./tool.js";

/** What runs each inline tool, by id. */
export const INLINE_TOOLS: Readonly<Record<string, InlineTool>> = { ...textTools, ...dataTools, ...netTools };

/** What runs each job tool, by id. */
export const JOB_TOOLS: Readonly<Record<string, JobTool>> = fileTools;
