import type { JsonValue } from "@bufbuild/protobuf";
import { parse } from "secure-json-parse";
import { invalid } from "../services/kit/handler/problem.js";
import { jsonShapeFault } from "./json-shape.js";

/**
 * JSON text as the gateway reads it wherever a request carries some: a JSON body (a JSON route's, an upload route's)
 * or a form field whose field is a message (an upload's `input`). Too wide or too deep is refused before it is
 * parsed (json-shape.ts); `__proto__` and `constructor.prototype` keys are refused, never merged into an object
 * (prototype poisoning: Fastify's own parser, secure-json-parse); malformed text is refused. Each is 400
 * request.invalid naming `field` ("body" for a body).
 */
export function parseJsonText(text: string, field = "body"): JsonValue {
  const what = field === "body" ? "The body" : `Field ${field}`;
  const fault = jsonShapeFault(text);
  if (fault)
    throw invalid(
      field,
      field === "body" ? fault : fault.replace("The body", what).replace("the body", `field ${field}`),
    );
  try {
    return parse(text, { protoAction: "error", constructorAction: "error" }) as JsonValue;
  } catch {
    throw invalid(field, `${what} is not valid JSON.`);
  }
}
