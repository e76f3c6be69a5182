import { problem } from "../../../kit/handler/problem.js";
import type { ToolDescriptor } from "../../catalogue/descriptor.js";
import type { ToolStatus } from "../../families/live.js";

/** The list's filters as the request carries them: empty is not given (proto strings). */
export interface ToolQuery {
  family: string;
  execution: string;
  api: string;
  status: string;
  text: string;
}

/** Whether a listed tool (with its live status) passes the filters. */
export type ToolFilter = (tool: ToolDescriptor, live: ToolStatus) => boolean;

const EXECUTIONS = ["inline", "job"];
const APIS = ["true", "false"];
const STATUSES = ["live", "unavailable"];

/**
 * The filters of a list, checked against their values (exact, lowercase): a family of the catalogue, `inline`
 * or `job`, `true` or `false`, `live` or `unavailable`; any other value is 400 tools.query.invalid naming the
 * filter and what it takes. `text` is words (split on white space) each found, case-insensitively, in the
 * tool's id, name or summary. Undefined when no filter is given: the whole list.
 */
export function toolFilter(query: ToolQuery, families: readonly string[]): ToolFilter | undefined {
  const family = oneOf("family", query.family, families);
  const execution = oneOf("execution", query.execution, EXECUTIONS);
  const api = oneOf("api", query.api, APIS);
  const status = oneOf("status", query.status, STATUSES);
  const words = query.text.toLowerCase().split(/\s+/).filter(Boolean);
  if ([family, execution, api, status].every((each) => each === undefined) && words.length === 0) return undefined;
  return (tool, live) =>
    (family === undefined || tool.family === family) &&
    (execution === undefined || tool.execution === execution) &&
    (api === undefined || String(tool.api) === api) &&
    (status === undefined || live.status === status) &&
    words.every((word) => `${tool.id}\n${tool.name}\n${tool.summary}`.toLowerCase().includes(word));
}

function oneOf(field: string, value: string, allowed: readonly string[]): string | undefined {
  if (value === "") return undefined;
  if (allowed.includes(value)) return value;
  throw problem(
    400,
    "tools.query.invalid",
    `The filter ${field} takes ${allowed.map((each) => `"${each}"`).join(", ")}, not ${JSON.stringify(value)}.`,
    { field, allowed: [...allowed] },
  );
}
