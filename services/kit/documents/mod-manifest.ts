import { documentInvalid, schemaCheck } from "./json-schema.js";

/** The schema id the spec names for a mod's manifest (games installs them, codes keeps their releases). */
export const MOD_MANIFEST = "mods/mod-manifest.v1";

/** A capability name: dotted lower-case words (`world.read`, `games.mod.read`); no hyphen, as every capability. */
export const CAPABILITY_PATTERN = "^[a-z][a-z0-9_]*(\\.[a-z][a-z0-9_]*)+$";
/** A game key (and a game server's): lower-case letters and digits, then `.`, `_` or `-` too; 1–64. */
export const KEY_PATTERN = "^[a-z0-9][a-z0-9._-]{0,63}$";
/** A path among a mod's files: relative, `/`-separated, no segment starting with a dot (no `..`, no hidden files). */
export const RELATIVE_PATH_PATTERN = "^[A-Za-z0-9_-][A-Za-z0-9_.-]*(/[A-Za-z0-9_-][A-Za-z0-9_.-]*)*$";

/**
 * mods/mod-manifest.v1, the one definition (designed: the spec names the id,
 * not its fields). One document means the same everywhere: games installs it,
 * codes keeps it as a mod release's metadata.
 *
 * - Strict: an unknown member is refused, never kept, so a trust tier or a
 *   grant cannot ride in (both are staff and manager decisions, not the mod's).
 * - `kind`: optional, always "mod"; codes tells a mod's manifest from an app's
 *   by it (codes reads a manifest without it as an app's).
 * - Required: `id` (slug or reverse-DNS, 3–64), `name` (1–100), `version`
 *   (exactly semver, no `v`), `game` (a key), `capabilities` (requested,
 *   dotted lower-case words, unique, ≤ 64).
 * - `compatibility`: the game versions it works with, a semver range (absent:
 *   any); codes takes it as the release's compatibility range.
 * - Optional `description`, `authors`, `homepage` (https), `entry` (the file
 *   the game loads first, a relative path), `content.digest` (`sha256:<hex>`,
 *   pins the content pack installed with it), `$schema` (this id).
 */
export const modManifestSchema = {
  $id: MOD_MANIFEST,
  type: "object",
  additionalProperties: false,
  required: ["id", "name", "version", "game", "capabilities"],
  properties: {
    $schema: { const: MOD_MANIFEST },
    kind: { const: "mod" },
    id: { type: "string", minLength: 3, maxLength: 64, pattern: "^[a-z0-9][a-z0-9-]*(\\.[a-z0-9][a-z0-9-]*)*$" },
    name: { type: "string", minLength: 1, maxLength: 100 },
    version: { type: "string", maxLength: 64, format: "semver" },
    game: { type: "string", pattern: KEY_PATTERN },
    capabilities: {
      type: "array",
      maxItems: 64,
      uniqueItems: true,
      items: { type: "string", maxLength: 64, pattern: CAPABILITY_PATTERN },
    },
    compatibility: { type: "string", maxLength: 256, format: "semver-range" },
    description: { type: "string", maxLength: 2000 },
    authors: { type: "array", maxItems: 20, items: { type: "string", minLength: 1, maxLength: 100 } },
    homepage: { type: "string", maxLength: 2048, pattern: "^https://[^\\s]+$" },
    entry: { type: "string", maxLength: 256, pattern: RELATIVE_PATH_PATTERN },
    content: {
      type: "object",
      additionalProperties: false,
      required: ["digest"],
      properties: { digest: { type: "string", pattern: "^sha256:[0-9a-f]{64}$" } },
    },
  },
} as const;

/** A manifest that passed mods/mod-manifest.v1: the members its schema guarantees. */
export interface ModManifestDocument {
  kind?: "mod";
  id: string;
  name: string;
  version: string;
  game: string;
  capabilities: string[];
  compatibility?: string;
  content?: { digest: string };
}

/** The faults of a document against mods/mod-manifest.v1 (none: it is one). */
export const modManifestFaults = schemaCheck(modManifestSchema);

/**
 * A request's `manifest` as a mods/mod-manifest.v1, typed; else 400 with the
 * caller's own problem code (`games.manifest_invalid`, `codes.manifest_invalid`)
 * naming the pointer of the first fault, and up to 20 in `errors`.
 */
export function requireModManifest(document: object, code: string): ModManifestDocument {
  const faults = modManifestFaults(document);
  if (faults.length > 0) throw documentInvalid(code, "manifest", faults, MOD_MANIFEST);
  return document as ModManifestDocument;
}
