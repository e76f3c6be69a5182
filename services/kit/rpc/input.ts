import type { Interceptor } from "@connectrpc/connect";
import { invalid } from "../handler/problem.js";

/**
 * Text and numbers no service can store or answer with: a NUL character
 * (PostgreSQL refuses it), a lone UTF-16 surrogate (not text), and a number
 * that is not finite (JSON has none). Refused as 400 naming the field, before
 * any handler runs, for callers over the gateway and over RPC alike.
 */
export function inputGuard(): Interceptor {
  return (next) => (req) => {
    if (!req.stream) {
      const field = unstorable(req.message, "");
      if (field !== undefined)
        throw invalid(
          field || "body",
          `Field ${field || "body"} holds text or a number that cannot be stored (NUL, a lone surrogate, or not finite).`,
        );
      const unknown = unknownField(req.message, "");
      if (unknown !== undefined)
        throw invalid(
          unknown,
          `Field ${unknown} is not part of this request: fields the contract does not name are refused, never dropped.`,
        );
    }
    return next(req);
  };
}

/**
 * The path of the first field a binary caller sent that the contract does not
 * name (protobuf keeps them as unknown fields): `weight` sent to a vote would
 * otherwise be dropped silently, where the gateway refuses it by name.
 */
export function unknownField(value: unknown, path: string): string | undefined {
  if (typeof value !== "object" || value === null || value instanceof Uint8Array) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = unknownField(value[i], `${path}[${i}]`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (!("$typeName" in value)) return undefined;
  const unknown = (value as { $unknown?: { no: number }[] }).$unknown;
  if (unknown && unknown.length > 0) return `${path === "" ? "" : `${path}.`}#${unknown[0].no}`;
  for (const key in value) {
    if (key === "$typeName" || key === "$unknown") continue;
    const found = unknownField(
      (value as Record<string, unknown>)[key],
      path === "" ? snake(key) : `${path}.${snake(key)}`,
    );
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The path of the first unstorable value (or object key) in a message or JSON value, or undefined. */
export function unstorable(value: unknown, path: string): string | undefined {
  const trail = find(value);
  if (trail === undefined) return undefined;
  return trail.reduce<string>(
    (at, step) => (typeof step === "number" ? `${at}[${step}]` : at === "" ? step : `${at}.${step}`),
    path,
  );
}

/** The steps to the first unstorable value, built only on the way back out from one. */
function find(value: unknown): (string | number)[] | undefined {
  switch (typeof value) {
    case "string":
      return badText(value) ? [] : undefined;
    case "number":
      return Number.isFinite(value) ? undefined : [];
    case "object": {
      if (value === null || value instanceof Uint8Array) return undefined;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) {
          const trail = find(value[i]);
          if (trail) return [i, ...trail];
        }
        return undefined;
      }
      // A message's members are lowerCamel in code and snake_case in the contract; JSON keys are as given.
      const message = "$typeName" in value;
      for (const key in value) {
        if (key === "$typeName" || key === "$unknown") continue;
        const step = message ? snake(key) : key;
        if (!message && badText(key)) return [step];
        const trail = find((value as Record<string, unknown>)[key]);
        if (trail) return [step, ...trail];
      }
      return undefined;
    }
    default:
      return undefined;
  }
}

function badText(text: string): boolean {
  return text.includes("\u0000") || !text.isWellFormed();
}

/** Message members are lowerCamel in code; the contract names them snake_case. */
function snake(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}
