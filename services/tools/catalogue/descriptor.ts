import type { QuotaClass } from "../settings.js";

/** A JSON Schema (draft-07, as the kit's ajv reads it) as plain data. */
export type JsonSchema = Record<string, unknown>;

/** A JSON object: a tool's input or output. */
export type JsonObject = Record<string, unknown>;

/** Whom a tool takes (the `tool` relation's role): anyone, a signed-in caller, or a partner's probe principal. */
export type AuthClass = "anonymous" | "signed_in" | "probe";

/**
 * A tool descriptor (tools.tool@1) as the catalogue declares it. What the registry answers is this plus the
 * tool's live status (from what runs it) and its call address; lists carry the schemas as `{ $ref }`.
 */
export interface ToolDescriptor {
  /** `<family>.<name>`: img.process, text.hash, net.port… */
  id: string;
  name: string;
  summary: string;
  family: string;
  /** inline: the run answers its output; job: a job runs it (img.process, audio.process, docs.process). */
  execution: "inline" | "job";
  /** Whether the run API exposes it. */
  api: boolean;
  /** `planned` and `mirror` (listed from another site, never run here) are not listed, and 404 on read, schema and run. */
  catalogue: "available" | "planned" | "mirror";
  /** Its input's schema; false for a tool without an API. */
  input: JsonSchema | false;
  output: JsonSchema;
  /** Input files a job tool takes: media types (`image/*`), how many and how large each. */
  files?: { accept: string[]; maxCount: number; maxBytes: number };
  limits: {
    /** The run's own budget, in ms. */
    timeoutMs: number;
    /** The largest JSON input, in bytes. */
    maxInputBytes: number;
    /** Network probes: runs per target per minute, across all callers. */
    perTargetPerMinute?: number;
  };
  auth: { capability: "tools.tool.run" | "tools.net.probe"; anonymous: boolean };
  quotaClass: QuotaClass;
  /** Units of its quota class one run takes. */
  cost: number;
  /** Whether it reaches the network, and which hosts (`*`: any public host, never an inside one). */
  egress: boolean;
  hosts: string[];
  /** Where a person reads about it (a path of the platform's docs). */
  docs: string;
}

/** A tool's auth class, from its descriptor. */
export function authClassOf(tool: ToolDescriptor): AuthClass {
  if (tool.auth.capability === "tools.net.probe") return "probe";
  return tool.auth.anonymous ? "anonymous" : "signed_in";
}
