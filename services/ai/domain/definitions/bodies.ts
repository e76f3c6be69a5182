import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { problem } from "../../../kit/handler/problem.js";
import { OPERATIONS, isOperation, type Operation } from "../operations.js";
import type { DefinitionKind } from "./lifecycle.js";

export interface PromptBody {
  template: string;
  system: string;
}

export interface WorkflowBody {
  operation: Operation;
  prompt?: string;
  route: string;
  maxOutputTokens?: number;
  labels: string[];
  fields: string[];
}

export interface RouteBody {
  targets: string[];
  operations: Partial<Record<Operation, string[]>>;
}

const MAX_TEXT = 20_000;
const MAX_TARGETS = 10;
const MAX_OUTPUT_TOKENS = 32_768;
const MAX_NAMES = 100;
const KEY = /^[a-z][a-z0-9_]*(\.[a-z0-9_-]+)*$/;
/** `<namespace>.<name>`: the namespace is what a token's ns claim names. */
const WORKFLOW_KEY = /^[a-z][a-z0-9_]*(\.[a-z0-9_-]+)+$/;
/** `provider/model`, as a provider's key and a model's name are written (admin.proto). */
const TARGET = /^[a-z][a-z0-9_-]{0,63}\/[A-Za-z0-9][A-Za-z0-9._:@/-]{0,199}$/;

const refused = (field: string, detail: string) => problem(400, "ai.definition_invalid", detail, { field });

/** A definition's key as its kind needs it: a workflow's is `<namespace>.<name>`. */
export function checkKey(kind: DefinitionKind, key: string): void {
  if (!KEY.test(key) || key.length > 128) throw refused("key", "The key is lower-case words joined by dots.");
  if (kind === "workflow" && !WORKFLOW_KEY.test(key)) throw refused("key", "A workflow's key is <namespace>.<name>.");
}

/** The body checked for its kind; 400 ai.definition_invalid naming the first field at fault. */
export function checkBody(kind: DefinitionKind, body: JsonObject | undefined): void {
  if (body === undefined) throw refused("body", `A ${kind} version needs its body.`);
  ({ prompt: promptBody, workflow: workflowBody, route: routeBody })[kind](body);
}

export function promptBody(body: JsonObject): PromptBody {
  onlyFields(body, ["template", "system"]);
  const template = text(body.template, "body.template", 1);
  const system = body.system === undefined ? "" : text(body.system, "body.system", 0);
  return { template, system };
}

export function workflowBody(body: JsonObject): WorkflowBody {
  onlyFields(body, ["operation", "prompt", "route", "max_output_tokens", "labels", "fields"]);
  const operation = body.operation;
  if (!isOperation(operation)) throw refused("body.operation", `The operation is one of ${OPERATIONS.join(", ")}.`);
  const labels = body.labels === undefined ? [] : names(body.labels, "body.labels");
  if (labels.length > 0 && operation !== "classify")
    throw refused("body.labels", "Only a classify workflow takes labels.");
  const fields = body.fields === undefined ? [] : names(body.fields, "body.fields");
  if (fields.length > 0 && operation !== "extract")
    throw refused("body.fields", "Only an extract workflow takes fields.");
  return {
    operation,
    prompt: body.prompt === undefined ? undefined : key(body.prompt, "body.prompt"),
    route: body.route === undefined ? "default" : key(body.route, "body.route"),
    maxOutputTokens: body.max_output_tokens === undefined ? undefined : tokens(body.max_output_tokens),
    labels,
    fields,
  };
}

export function routeBody(body: JsonObject): RouteBody {
  onlyFields(body, ["targets", "operations"]);
  const targets = targetList(body.targets, "body.targets");
  const operations: Partial<Record<Operation, string[]>> = {};
  if (body.operations !== undefined) {
    const given = object(body.operations, "body.operations");
    for (const [operation, list] of Object.entries(given)) {
      const field = `body.operations.${operation}`;
      if (!isOperation(operation)) throw refused(field, `The operations are ${OPERATIONS.join(", ")}.`);
      operations[operation] = targetList(list, field);
    }
  }
  return { targets, operations };
}

function onlyFields(body: JsonObject, known: string[]): void {
  const unknown = Object.keys(body).find((name) => !known.includes(name));
  if (unknown !== undefined) throw refused(`body.${unknown}`, `The body takes only ${known.join(", ")}.`);
}

function object(value: JsonValue | undefined, field: string): JsonObject {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw refused(field, `${field} is an object.`);
  return value;
}

function text(value: JsonValue | undefined, field: string, min: number): string {
  if (typeof value !== "string" || value.length < min || value.length > MAX_TEXT)
    throw refused(field, `${field} is text of ${min} to ${MAX_TEXT} characters.`);
  return value;
}

function key(value: JsonValue | undefined, field: string): string {
  if (typeof value !== "string" || !KEY.test(value) || value.length > 128)
    throw refused(field, `${field} is a definition's key.`);
  return value;
}

function tokens(value: JsonValue): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > MAX_OUTPUT_TOKENS)
    throw refused("body.max_output_tokens", `body.max_output_tokens is a whole number from 1 to ${MAX_OUTPUT_TOKENS}.`);
  return value;
}

function list(value: JsonValue | undefined, field: string, max: number): JsonValue[] {
  if (!Array.isArray(value) || value.length < 1 || value.length > max)
    throw refused(field, `${field} is a list of 1 to ${max} items.`);
  return value;
}

/** Labels or fields: distinct, non-empty, short. */
function names(value: JsonValue, field: string): string[] {
  const items = list(value, field, MAX_NAMES);
  items.forEach((item, index) => {
    if (typeof item !== "string" || item.trim() === "" || item.length > 200 || items.indexOf(item) !== index)
      throw refused(`${field}[${index}]`, `${field}[${index}] is a distinct name of 1 to 200 characters.`);
  });
  return items as string[];
}

/** Models in fallback order; they need not exist yet (a run checks them). */
function targetList(value: JsonValue | undefined, field: string): string[] {
  const items = list(value, field, MAX_TARGETS);
  items.forEach((item, index) => {
    if (typeof item !== "string" || !TARGET.test(item) || items.indexOf(item) !== index)
      throw refused(`${field}[${index}]`, `${field}[${index}] is a distinct provider/model.`);
  });
  return items as string[];
}
