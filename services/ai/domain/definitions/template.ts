import { problem } from "../../../kit/handler/problem.js";

/** `{{name}}` (spaces inside the braces allowed): a variable's name is a word, dotted names excepted. */
const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

/** The variables a template names, each once, in the order they first appear. */
export function placeholdersOf(template: string): string[] {
  return [...new Set(Array.from(template.matchAll(PLACEHOLDER), (match) => match[1]!))];
}

/**
 * The template with each `{{name}}` replaced by its variable's text: strings as they are, numbers and booleans as
 * text, anything else as JSON. A placeholder without its variable (or with null) is 400 ai.input.invalid naming it,
 * never a prompt with a hole in it.
 */
export function renderTemplate(template: string, variables: Record<string, unknown>): string {
  const missing = placeholdersOf(template).find((name) => variables[name] === undefined || variables[name] === null);
  if (missing !== undefined) {
    const field = `variables.${missing}`;
    throw problem(400, "ai.input.invalid", `The prompt needs the variable ${missing}.`, { field });
  }
  return template.replace(PLACEHOLDER, (_, name: string) => textOf(variables[name]));
}

function textOf(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") return String(value);
  return JSON.stringify(value);
}
