import type { Interceptor } from "@connectrpc/connect";
import { invalid } from "../problem.js";

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
      if (field !== undefined) throw invalid(field || "body", `Field ${field || "body"} holds text or a number that cannot be stored (NUL, a lone surrogate, or not finite).`);
    }
    return next(req);
  };
}

/** The path of the first unstorable value in a message or JSON value, or undefined. */
export function unstorable(value: unknown, path: string): string | undefined {
  switch (typeof value) {
    case "string":
      return value.includes("\u0000") || !value.isWellFormed() ? path : undefined;
    case "number":
      return Number.isFinite(value) ? undefined : path;
    case "object": {
      if (value === null || value instanceof Uint8Array) return undefined;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) {
          const found = unstorable(value[i], `${path}[${i}]`);
          if (found !== undefined) return found;
        }
        return undefined;
      }
      for (const [key, member] of Object.entries(value)) {
        if (key === "$typeName" || key === "$unknown") continue;
        const found = unstorable(member, path === "" ? snake(key) : `${path}.${snake(key)}`);
        if (found !== undefined) return found;
      }
      return undefined;
    }
    default:
      return undefined;
  }
}

/** Message members are lowerCamel in code; the contract names them snake_case. */
function snake(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}
