import { toJson } from "@bufbuild/protobuf";
import type { EntityManager } from "@mikro-orm/postgresql";
import { RunCreateRequestSchema, type RunCreateRequest } from "../../../gen/pf/ai/v1/runs_pb.js";
import type { Principal } from "../../kit/auth/principal.js";
import { problem } from "../../kit/handler/problem.js";
import type { ModelRow, ProviderRow } from "../db/entities.js";
import { modelByName } from "../db/models.js";
import { providerByKey } from "../db/providers.js";
import { renderTemplate } from "../domain/definitions/template.js";
import { routeToUse, targetsFor, workflowToRun } from "../domain/definitions/resolve.js";
import { directNamespace, workflowNamespace } from "../domain/namespace.js";
import type { Operation, RunKind } from "../domain/operations.js";
import { runInputOf, textsOf, type RunInput } from "../domain/run-input.js";
import { estimateAll } from "../domain/tokens.js";

/** A model a run may call: its provider and model rows, and the output budget it gets there. */
export interface Target {
  provider: ProviderRow;
  model: ModelRow;
  maxOutputTokens: number;
}

/** Everything a run needs before its first call, decided from the request and the definitions. */
export interface Plan {
  kind: RunKind;
  operation: Operation;
  workflow: string;
  workflowVersion: number;
  namespace: string;
  caller: string;
  /** The workflow's prompt, rendered (its system text first); "" for a direct operation. */
  instruction: string;
  input: RunInput;
  temperature?: number;
  /** The models to try, in fallback order, each enabled and serving the operation with room for the input. */
  targets: Target[];
  /** Estimated input tokens of one call (what quotas reserve). */
  estimate: number;
  /** The definition versions the answer depends on (a part of the cache key). */
  definitions: string;
  /** What was asked, as stored on the run (a retry asks it again); a direct operation's namespace resolved. */
  request: Record<string, unknown>;
}

const inputInvalid = (field: string, detail: string) => problem(400, "ai.input.invalid", detail, { field });

/**
 * From a request to a plan, refusing before any run exists: a workflow on a direct route or none on the workflow
 * route (400 ai.input.invalid), an unknown workflow or route (404), a disabled route (409), no callable model
 * (503 ai.provider_unavailable), an input larger than every model's context (400 ai.context_exceeded).
 */
export async function planRun(
  em: EntityManager,
  kind: RunKind,
  request: RunCreateRequest,
  principal: Principal,
  caller: string,
): Promise<Plan> {
  const direct = kind !== "workflow";
  if (direct && (request.workflow !== "" || request.workflowVersion !== 0))
    throw inputInvalid("workflow", `The ${kind} route runs a direct operation; workflows run on /api/v1/runs.`);
  if (!direct && request.workflow === "") throw inputInvalid("workflow", "A workflow run names its workflow.");

  const workflow = direct ? undefined : await workflowToRun(em, request.workflow, request.workflowVersion || undefined);
  const operation = workflow?.operation ?? (kind as Operation);
  const namespace = workflow ? workflowNamespace(workflow.key) : directNamespace(request.namespace, principal);
  const input = runInputOf(request, operation, workflow);
  const instruction = workflow?.prompt
    ? [workflow.prompt.system, renderTemplate(workflow.prompt.template, request.variables ?? {})]
        .filter((part) => part !== "")
        .join("\n\n")
    : "";

  let names: string[];
  let routeVersion = "";
  if (request.model !== "") {
    if (!/^[^/]+\/.+$/.test(request.model)) throw inputInvalid("model", "A model is named <provider>/<model>.");
    names = [request.model];
  } else {
    const route = await routeToUse(em, workflow?.route ?? (request.route || "default"));
    names = targetsFor(route, operation);
    routeVersion = `${route.key}@${route.version}`;
  }

  const estimate = estimateAll(textsOf(instruction, input));
  const asked = request.maxOutputTokens || workflow?.maxOutputTokens || 0;
  const servable = await servingTargets(em, names, operation, asked);
  if (servable.length === 0) {
    if (request.model !== "" && (await namedModelMissing(em, request.model)))
      throw problem(404, "ai.model.not_found", `No model ${request.model} is registered.`, { model: request.model });
    throw unavailable(operation);
  }
  const targets = servable.filter((target) => estimate <= target.model.contextTokens - target.maxOutputTokens);
  if (targets.length === 0)
    throw problem(
      400,
      "ai.context_exceeded",
      `The input (about ${estimate} tokens) and its output budget exceed the context of every model it may use.`,
      { estimated_tokens: estimate },
    );

  const stored = toJson(RunCreateRequestSchema, request) as Record<string, unknown>;
  delete stored.waitMs;
  if (direct) stored.namespace = namespace;
  return {
    kind,
    operation,
    workflow: workflow?.key ?? "",
    workflowVersion: workflow?.version ?? 0,
    namespace,
    caller,
    instruction,
    input,
    temperature: request.temperature,
    targets,
    estimate,
    definitions: [
      workflow ? `${workflow.key}@${workflow.version}` : "",
      workflow?.prompt ? `${workflow.prompt.key}@${workflow.prompt.version}` : "",
      routeVersion,
    ].join("|"),
    request: stored,
  };
}

/** 503: no model of the run's targets can be called (providers or models disabled, or none serving it). */
export function unavailable(operation: Operation): Error {
  return problem(503, "ai.provider_unavailable", `No enabled model can run ${operation} now.`, { operation });
}

/** The named `provider/model`s that are enabled, on an enabled provider, and serve the operation, in order. */
async function servingTargets(
  em: EntityManager,
  names: string[],
  operation: Operation,
  askedOutput: number,
): Promise<Target[]> {
  const targets: Target[] = [];
  for (const name of names) {
    const slash = name.indexOf("/");
    const provider = await providerByKey(em, name.slice(0, slash));
    const model = await modelByName(em, name.slice(0, slash), name.slice(slash + 1));
    if (!provider?.enabled || !model?.enabled || !model.operations.includes(operation)) continue;
    const maxOutputTokens = askedOutput > 0 ? Math.min(askedOutput, model.maxOutputTokens) : model.maxOutputTokens;
    targets.push({ provider, model, maxOutputTokens });
  }
  return targets;
}

async function namedModelMissing(em: EntityManager, name: string): Promise<boolean> {
  const slash = name.indexOf("/");
  return (await modelByName(em, name.slice(0, slash), name.slice(slash + 1))) === undefined;
}
