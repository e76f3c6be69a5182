import type { ToolDescriptor } from "./descriptor.js";

const KIB = 1024;

/**
 * What every light inline tool shares: run by the API, anyone may call it (anonymous callers by address), one unit
 * of the `light` quota class a run, and no network.
 */
export const LIGHT_INLINE: Pick<
  ToolDescriptor,
  "execution" | "api" | "catalogue" | "auth" | "quotaClass" | "cost" | "egress" | "hosts" | "docs"
> = {
  execution: "inline",
  api: true,
  catalogue: "available",
  auth: { capability: "tools.tool.run", anonymous: true },
  quotaClass: "light",
  cost: 1,
  egress: false,
  hosts: [],
  docs: "services/tools/README.md#inline-tools",
};

/** A text to work on: its UTF-8 bytes, for the tools that take bytes. */
const text = (description: string, maxLength: number) => ({ type: "string", maxLength, description });

/** The catalogue's text tools. */
export const textCatalogue: readonly ToolDescriptor[] = [
  {
    ...LIGHT_INLINE,
    id: "text.hash",
    family: "text",
    name: "Hash",
    summary: "The MD5, SHA-1, SHA-256 or SHA-512 digest of a text's UTF-8 bytes, in hex or base64.",
    input: {
      type: "object",
      additionalProperties: false,
      required: ["text"],
      properties: {
        text: text("The text whose UTF-8 bytes are hashed.", 1000 * KIB),
        algorithm: { enum: ["md5", "sha1", "sha256", "sha512"], default: "sha256" },
        encoding: { enum: ["hex", "base64"], default: "hex", description: "How the digest is written." },
      },
    },
    output: {
      type: "object",
      additionalProperties: false,
      required: ["algorithm", "encoding", "digest"],
      properties: {
        algorithm: { enum: ["md5", "sha1", "sha256", "sha512"] },
        encoding: { enum: ["hex", "base64"] },
        digest: { type: "string" },
      },
    },
    limits: { timeoutMs: 2_000, maxInputBytes: 1000 * KIB },
  },
  {
    ...LIGHT_INLINE,
    id: "text.base64",
    family: "text",
    name: "Base64",
    summary: "Encodes a text's UTF-8 bytes as base64 (standard or URL-safe), or decodes base64 back to text.",
    input: {
      type: "object",
      additionalProperties: false,
      required: ["text", "direction"],
      properties: {
        text: text("The text to encode, or the base64 to decode (padding optional, whitespace ignored).", 1000 * KIB),
        direction: { enum: ["encode", "decode"] },
        url_safe: {
          type: "boolean",
          default: false,
          description: "Encode with the URL-safe alphabet (- and _) and no padding; decoding takes either alphabet.",
        },
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
    id: "text.slug",
    family: "text",
    name: "Slug",
    summary: "A URL slug of a text, every script spelt in Latin: “Привет, мир!” → privet-mir.",
    input: {
      type: "object",
      additionalProperties: false,
      required: ["text"],
      properties: {
        text: text("The text to make a slug of.", 16 * KIB),
        max_length: { type: "integer", minimum: 1, maximum: 200, default: 80 },
      },
    },
    output: {
      type: "object",
      additionalProperties: false,
      required: ["slug"],
      properties: {
        slug: { type: "string", maxLength: 200, description: "Empty when the text has nothing to spell." },
      },
    },
    limits: { timeoutMs: 2_000, maxInputBytes: 64 * KIB },
  },
  {
    ...LIGHT_INLINE,
    id: "text.case",
    family: "text",
    name: "Change case",
    summary:
      "A text in another case: lower, upper, title, sentence, camelCase, PascalCase, snake_case, kebab-case, CONSTANT_CASE.",
    input: {
      type: "object",
      additionalProperties: false,
      required: ["text", "case"],
      properties: {
        text: text(
          "The text; for the joined cases, its words are split at spaces, punctuation and camelCase humps.",
          64 * KIB,
        ),
        case: { enum: ["lower", "upper", "title", "sentence", "camel", "pascal", "snake", "kebab", "constant"] },
      },
    },
    output: {
      type: "object",
      additionalProperties: false,
      required: ["text"],
      properties: { text: { type: "string" } },
    },
    limits: { timeoutMs: 2_000, maxInputBytes: 80 * KIB },
  },
];
