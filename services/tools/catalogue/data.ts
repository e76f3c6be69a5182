import type { ToolDescriptor } from "./descriptor.js";
import { LIGHT_INLINE } from "./text.js";

const KIB = 1024;

/** How many schema faults data.json-validate lists at most. */
export const MAX_VALIDATION_ERRORS = 100;

/** The largest UUID batch id.uuid makes. */
export const MAX_UUIDS = 100;

/** The most a QR code holds: 2,953 bytes (version 40 at error correction L). */
export const MAX_QR_BYTES = 2953;

/** The catalogue's data tools, and the generators beside them (UUIDs, QR codes). */
export const dataCatalogue: readonly ToolDescriptor[] = [
  {
    ...LIGHT_INLINE,
    id: "data.json-format",
    family: "data",
    name: "JSON format",
    summary: "Pretty-prints JSON text with an indent, or minifies it; numbers and keys are kept exactly as written.",
    input: {
      type: "object",
      additionalProperties: false,
      required: ["text"],
      properties: {
        text: { type: "string", maxLength: 1000 * KIB, description: "JSON text." },
        style: { enum: ["pretty", "minify"], default: "pretty" },
        indent: { type: "integer", minimum: 1, maximum: 8, default: 2, description: "Spaces per level (pretty)." },
      },
    },
    output: {
      type: "object",
      additionalProperties: false,
      required: ["text"],
      properties: { text: { type: "string" } },
    },
    limits: { timeoutMs: 2_000, maxInputBytes: 1000 * KIB },
  },
  {
    ...LIGHT_INLINE,
    id: "data.json-validate",
    family: "data",
    name: "JSON Schema validate",
    summary:
      "Validates a JSON document against a JSON Schema (draft-07, 2019-09 or 2020-12 by its $schema; 2020-12 when it names none), listing each fault at a JSON pointer. References outside the schema are never fetched.",
    input: {
      type: "object",
      additionalProperties: false,
      required: ["document", "schema"],
      properties: {
        document: { description: "Any JSON value." },
        schema: {
          anyOf: [{ type: "object" }, { type: "boolean" }],
          description: "The JSON Schema to validate the document against.",
        },
      },
    },
    output: {
      type: "object",
      additionalProperties: false,
      required: ["valid", "errors"],
      properties: {
        valid: { type: "boolean" },
        errors: {
          type: "array",
          maxItems: MAX_VALIDATION_ERRORS,
          description: `The document's faults, the first ${MAX_VALIDATION_ERRORS}; none when valid.`,
          items: {
            type: "object",
            additionalProperties: false,
            required: ["pointer", "keyword", "message", "schema_path"],
            properties: {
              pointer: { type: "string", description: "Where in the document (RFC 6901; empty for the whole)." },
              keyword: { type: "string", description: "The schema keyword that failed." },
              message: { type: "string" },
              schema_path: { type: "string", description: "The failing keyword's place in the schema." },
            },
          },
        },
      },
    },
    // A schema can cost time exponential in its size: it runs in a worker ended at the time budget.
    limits: { timeoutMs: 2_000, maxInputBytes: 256 * KIB },
  },
  {
    ...LIGHT_INLINE,
    id: "id.uuid",
    family: "id",
    name: "UUID",
    summary: `Random (version 4) or time-ordered (version 7) UUIDs, up to ${MAX_UUIDS} at once.`,
    input: {
      type: "object",
      additionalProperties: false,
      properties: {
        version: { enum: [4, 7], default: 4 },
        count: { type: "integer", minimum: 1, maximum: MAX_UUIDS, default: 1 },
      },
    },
    output: {
      type: "object",
      additionalProperties: false,
      required: ["uuids"],
      properties: {
        uuids: {
          type: "array",
          minItems: 1,
          maxItems: MAX_UUIDS,
          description: "Version 7 ones in ascending order.",
          items: {
            type: "string",
            pattern: "^[0-9a-f]{8}-[0-9a-f]{4}-[47][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$",
          },
        },
      },
    },
    limits: { timeoutMs: 2_000, maxInputBytes: 1 * KIB },
  },
  {
    ...LIGHT_INLINE,
    id: "qr.code",
    family: "qr",
    name: "QR code",
    summary: "A QR code of a text (a URL, a Wi-Fi login, any text) as an SVG image.",
    input: {
      type: "object",
      additionalProperties: false,
      required: ["text"],
      properties: {
        text: { type: "string", minLength: 1, maxLength: MAX_QR_BYTES, description: "What the code holds." },
        error_correction: {
          enum: ["L", "M", "Q", "H"],
          default: "M",
          description: "How much of the code may be lost and still read: 7 %, 15 %, 25 %, 30 %.",
        },
        margin: { type: "integer", minimum: 0, maximum: 16, default: 4, description: "Quiet zone, in modules." },
        dark: { type: "string", pattern: "^#[0-9a-fA-F]{6}$", default: "#000000" },
        light: { type: "string", pattern: "^#[0-9a-fA-F]{6}$", default: "#ffffff" },
      },
    },
    output: {
      type: "object",
      additionalProperties: false,
      required: ["svg", "version", "size"],
      properties: {
        svg: { type: "string", description: "An SVG document (image/svg+xml) scaling to any size." },
        version: { type: "integer", minimum: 1, maximum: 40, description: "The QR version chosen (1 to 40)." },
        size: { type: "integer", description: "Modules a side, margin excluded." },
      },
    },
    limits: { timeoutMs: 2_000, maxInputBytes: 16 * KIB },
  },
];
