import type { EntityManager } from "@mikro-orm/postgresql";
import { problem } from "../../../kit/handler/problem.js";
import { definitionByKey, versionByNumber, type StoredVersion } from "../../db/definitions.js";
import type { Operation } from "../operations.js";
import { promptBody, routeBody, workflowBody } from "./bodies.js";

/** What a workflow run needs of its definition, its prompt's active version included. */
export interface ResolvedWorkflow {
  key: string;
  version: number;
  operation: Operation;
  prompt?: { key: string; version: number; template: string; system: string };
  route: string;
  maxOutputTokens?: number;
  labels: string[];
  fields: string[];
}

/** A routing profile's active version: models in fallback order, and an operation's own list where it has one. */
export interface ResolvedRoute {
  key: string;
  version: number;
  targets: string[];
  operations: Partial<Record<Operation, string[]>>;
}

/**
 * The workflow version a run uses: the one asked for, else the active one. 404 ai.workflow.not_found for no such
 * workflow or version (or none active when none is asked); 409 ai.definition_state for a draft or archived one.
 * Deprecated versions still run: callers pinned to them keep working until they are archived.
 */
export async function workflowToRun(em: EntityManager, key: string, version?: number): Promise<ResolvedWorkflow> {
  const definition = await definitionByKey(em, "workflow", key);
  const asked = version !== undefined && version > 0;
  const number = asked ? version : definition?.activeVersion;
  const found = definition && number ? await versionByNumber(em, "workflow", key, number) : undefined;
  if (found === undefined) {
    const what = asked ? `version ${version} of the workflow ${key}` : `an active version of the workflow ${key}`;
    throw problem(404, "ai.workflow.not_found", `There is no ${what}.`, { workflow: key });
  }
  if (found.status === "draft" || found.status === "archived")
    throw problem(
      409,
      "ai.definition_state",
      `Version ${found.version} of ${key} is ${found.status}: it does not run.`,
      { workflow: key, version: found.version, version_status: found.status },
    );
  const body = workflowBody(found.body);
  return {
    key,
    version: found.version,
    operation: body.operation,
    prompt: body.prompt === undefined ? undefined : await promptToUse(em, body.prompt),
    route: body.route,
    maxOutputTokens: body.maxOutputTokens,
    labels: body.labels,
    fields: body.fields,
  };
}

/** A routing profile's active version; 404 ai.route.not_found (none, or none active), 409 ai.route_disabled. */
export async function routeToUse(em: EntityManager, key: string): Promise<ResolvedRoute> {
  const definition = await definitionByKey(em, "route", key);
  const found = definition?.activeVersion
    ? await versionByNumber(em, "route", key, definition.activeVersion)
    : undefined;
  if (definition === undefined || found === undefined)
    throw problem(404, "ai.route.not_found", `There is no active routing profile ${key}.`, { route: key });
  if (definition.status === "disabled")
    throw problem(409, "ai.route_disabled", `The routing profile ${key} is disabled.`, { route: key });
  return { key, version: found.version, ...routeBody(found.body) };
}

/** The models an operation tries on a route, in fallback order: its own list, else the route's targets. */
export function targetsFor(route: ResolvedRoute, operation: Operation): string[] {
  return route.operations[operation] ?? route.targets;
}

/** The prompt's active version: a workflow naming a prompt with none is a definition fault, not the caller's. */
async function promptToUse(em: EntityManager, key: string): Promise<ResolvedWorkflow["prompt"]> {
  const definition = await definitionByKey(em, "prompt", key);
  const found: StoredVersion | undefined = definition?.activeVersion
    ? await versionByNumber(em, "prompt", key, definition.activeVersion)
    : undefined;
  if (found === undefined)
    throw problem(404, "ai.definition.not_found", `The prompt template ${key} has no active version.`, {
      kind: "prompt",
      key,
    });
  return { key, version: found.version, ...promptBody(found.body) };
}
