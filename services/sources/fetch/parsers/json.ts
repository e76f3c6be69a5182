import { ParseError } from "./common.js";

/** A JSON document, parsed; ParseError otherwise. */
export function parseJson(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch (error) {
    throw new ParseError(`invalid JSON: ${(error as Error).message}`);
  }
}

/** A member as text: strings as they are, numbers as written; undefined for anything else or empty. */
export function stringOf(value: unknown): string | undefined {
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}

/** The first member of `names` that holds text. */
export function firstOf(object: Record<string, unknown>, names: readonly string[]): string | undefined {
  for (const name of names) {
    const value = stringOf(object[name]);
    if (value !== undefined) return value;
  }
  return undefined;
}

/** JSON with keys sorted at every level: the same data gives the same text, whatever order the API sent. */
export function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(",")}]`;
  if (typeof value === "object" && value !== null)
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${stableJson((value as Record<string, unknown>)[key])}`)
      .join(",")}}`;
  return JSON.stringify(value) ?? "null";
}
