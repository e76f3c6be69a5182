/** The direct operations, each its own route; a workflow runs one of them under its definition. */
export const OPERATIONS = ["chat", "generate", "summarize", "classify", "extract", "enrich", "embed"] as const;
export type Operation = (typeof OPERATIONS)[number];

/** What a run is: a workflow run (`workflow`) or a direct operation. */
export type RunKind = Operation | "workflow";

export const RUN_STATES = ["queued", "running", "succeeded", "failed", "canceled"] as const;
export type RunState = (typeof RUN_STATES)[number];

export const isOperation = (value: unknown): value is Operation =>
  typeof value === "string" && (OPERATIONS as readonly string[]).includes(value);

export const hasEnded = (state: RunState): boolean =>
  state === "succeeded" || state === "failed" || state === "canceled";
