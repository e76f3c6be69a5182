import { KEY_PATTERN, RELATIVE_PATH_PATTERN } from "../../kit/documents/mod-manifest.js";

/**
 * games-content@1 (designed: the spec names it but shows no fields): the game
 * data a mod adds (entries of a kind the game knows, with free-form data) and
 * the files it needs, each a media object pinned by its sha256 digest: bytes
 * never travel inside the pack. Unknown members are refused. The manifest's
 * schema, mods/mod-manifest.v1, is the kit's, shared with codes.
 */
export const contentSchema = {
  $id: "games-content@1",
  type: "object",
  additionalProperties: false,
  required: ["entries"],
  properties: {
    $schema: { const: "games-content@1" },
    entries: {
      type: "array",
      maxItems: 2000,
      items: {
        type: "object",
        additionalProperties: false,
        required: ["kind", "id"],
        properties: {
          kind: { type: "string", pattern: "^[a-z][a-z0-9_]{0,31}$" },
          id: { type: "string", pattern: KEY_PATTERN },
          data: { type: "object" },
        },
      },
    },
    assets: {
      type: "array",
      maxItems: 500,
      items: {
        type: "object",
        additionalProperties: false,
        required: ["path", "media_key", "sha256"],
        properties: {
          path: { type: "string", maxLength: 256, pattern: RELATIVE_PATH_PATTERN },
          media_key: { type: "string", pattern: "^[A-Za-z0-9_-]{16,128}$" },
          sha256: { type: "string", pattern: "^[0-9a-f]{64}$" },
          size: { type: "integer", minimum: 0 },
          type: { type: "string", maxLength: 255, pattern: "^[a-z]+/[a-z0-9.+-]+$" },
        },
      },
    },
  },
} as const;
