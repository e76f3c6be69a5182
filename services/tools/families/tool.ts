import type { JsonObject } from "../catalogue/descriptor.js";
import type { ToolsContext } from "../context.js";
import type { ToolsSettings } from "../settings.js";

/** A tool's own failure (a file it cannot read, a target that did not answer): the run or job fails with it. */
export class ToolFailure extends Error {
  constructor(
    readonly code: string,
    readonly detail: string,
  ) {
    super(detail);
  }
}

/** What an inline tool is handed besides its input (valid against its input schema already). */
export interface InlineCall {
  ctx: ToolsContext;
  /** The caller's quota key (`usr_…`, `gst_…`, `app:<id>`, `svc:<key>`, or `ip:<keyed hash>`): never logged raw. */
  caller: string;
  /** Aborted when the tool's time budget passes or the caller goes away. */
  signal: AbortSignal;
}

/** An inline tool: its output (valid against its output schema), or a ToolFailure. */
export type InlineTool = (input: JsonObject, call: InlineCall) => Promise<JsonObject>;

/** An input file of a job, on local disk for the run. */
export interface JobInputFile {
  n: number;
  name: string;
  contentType: string;
  size: number;
  path: string;
}

/** A result file a job tool wrote (in its work directory). */
export interface JobResultFile {
  name: string;
  contentType: string;
  path: string;
}

/** What a job tool is handed: its input, its files, a directory of its own, progress and cancellation. */
export interface JobWork {
  input: JsonObject;
  files: JobInputFile[];
  /** An empty directory the tool writes its results in; removed after the run. */
  workDir: string;
  /** Reports progress, 0 to 100, with an optional note (persisted as a job event). */
  progress(percent: number, message?: string): Promise<void>;
  /** Aborted when the job is canceled, its lease is lost or its time budget passes. */
  signal: AbortSignal;
  /** The tools settings (the FFmpeg binary). */
  settings: ToolsSettings;
}

/** A job tool: its structured output and result files, or a ToolFailure. */
export type JobTool = (work: JobWork) => Promise<{ output: JsonObject; files: JobResultFile[] }>;
