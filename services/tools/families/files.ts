import { processAudio } from "./audio.js";
import { processDocument } from "./docs.js";
import { processImage } from "./img.js";
import type { JobTool } from "./tool.js";

/** The job tools (img.process, audio.process, docs.process), by id. */
export const fileTools: Record<string, JobTool> = {
  "img.process": processImage,
  "audio.process": (work) => processAudio(work, work.settings.ffmpeg),
  "docs.process": processDocument,
};
