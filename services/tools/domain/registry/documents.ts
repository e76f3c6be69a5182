import { getOption, type DescMethod } from "@bufbuild/protobuf";
import { http } from "../../../../gen/google/api/annotations_pb.js";
import { ToolsService } from "../../../../gen/pf/tools/v1/tools_pb.js";
import type { JsonSchema, ToolDescriptor } from "../../catalogue/descriptor.js";
import type { ToolStatus } from "../../families/live.js";

/**
 * The registry's JSON documents, in the platform's JSON spelling (snake_case, as the proto JSON mapping
 * writes every other service's answers): a tool (tools.tool@1), a list entry, a tool's schema document.
 */

/** The draft the kit's ajv checks tool input with (its default, draft-07): a schema document names it. */
export const SCHEMA_DIALECT = "http://json-schema.org/draft-07/schema#";

/**
 * A route's path on the gateway for this tool: the service's base path (`/tools`, served on every host) and
 * the route's binding in tools.proto, so the links stay the routes the contract declares.
 */
function pathOf(method: DescMethod, id: string): string {
  const rule = getOption(method, http);
  if (rule.pattern.case !== "get" && rule.pattern.case !== "post") throw new Error(`${method.name}: no GET or POST`);
  return `/tools${rule.pattern.value.replace("{id}", encodeURIComponent(id))}`;
}

export const schemaPath = (id: string) => pathOf(ToolsService.method.getToolSchema, id);
export const runPath = (id: string) => pathOf(ToolsService.method.runTool, id);

/** A tool's input schema: `false` (nothing is valid) for a tool the run API does not expose. */
const inputOf = (tool: ToolDescriptor): JsonSchema | false => (tool.api ? tool.input : false);

/** How a document carries the tool's schemas: embedded (a single read) or as `$ref`s to its schema route (lists). */
export type SchemaForm = "embedded" | "ref";

/**
 * tools.tool@1: the descriptor, its live status (`status_reason` only when unavailable), how to call it
 * (`call`, only for a tool the run API exposes), its schema route, and its schemas in the form asked.
 */
export function toolDocument(tool: ToolDescriptor, live: ToolStatus, form: SchemaForm): Record<string, unknown> {
  const schema = schemaPath(tool.id);
  const schemaOf = (which: "input" | "output", embedded: JsonSchema | false) =>
    form === "embedded" ? embedded : { $ref: `${schema}#/$defs/${which}` };
  return {
    id: tool.id,
    name: tool.name,
    summary: tool.summary,
    family: tool.family,
    execution: tool.execution,
    api: tool.api,
    status: live.status,
    ...(live.status === "unavailable" ? { status_reason: live.reason } : {}),
    ...(tool.api ? { call: { method: "POST", path: runPath(tool.id) } } : {}),
    schema,
    input_schema: schemaOf("input", inputOf(tool)),
    output_schema: schemaOf("output", tool.output),
    ...(tool.files
      ? { files: { accept: tool.files.accept, max_count: tool.files.maxCount, max_bytes: tool.files.maxBytes } }
      : {}),
    limits: {
      timeout_ms: tool.limits.timeoutMs,
      max_input_bytes: tool.limits.maxInputBytes,
      ...(tool.limits.perTargetPerMinute === undefined
        ? {}
        : { per_target_per_minute: tool.limits.perTargetPerMinute }),
    },
    auth: { capability: tool.auth.capability, anonymous: tool.auth.anonymous },
    quota_class: tool.quotaClass,
    cost: tool.cost,
    egress: tool.egress,
    hosts: tool.hosts,
    docs: tool.docs,
  };
}

/**
 * A tool's schema document, a JSON Schema whose `$id` is its own path: the `$ref`s of a list resolve into its
 * `$defs`.
 */
export function schemaDocument(tool: ToolDescriptor): Record<string, unknown> {
  return {
    $schema: SCHEMA_DIALECT,
    $id: schemaPath(tool.id),
    $defs: { input: inputOf(tool), output: tool.output },
  };
}
