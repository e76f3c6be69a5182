import type { JsonObject } from "@bufbuild/protobuf";
import { documentInvalid, schemaCheck } from "../../kit/documents/json-schema.js";
import { CAPABILITY_PATTERN, requireModManifest } from "../../kit/documents/mod-manifest.js";

/** The largest manifest a release keeps, as JSON. */
export const MAX_MANIFEST_BYTES = 64 * 1024;

const INVALID = "codes.manifest_invalid";

/**
 * An app's manifest (designed, codes only: the spec names no app schema).
 * `kind` may be left out; unknown fields are kept as sent (an app's manifest
 * may carry more than this service reads); trust fields are refused
 * (`TRUST_KEYS`). A mod's manifest is the kit's mods/mod-manifest.v1.
 */
const checkAppManifest = schemaCheck({
  $id: "apps/app-manifest.v1",
  type: "object",
  required: ["name", "version"],
  properties: {
    kind: { const: "app" },
    name: { type: "string", minLength: 1, maxLength: 100 },
    version: { type: "string", maxLength: 64, format: "semver" },
    compatibility: { type: "string", maxLength: 256, format: "semver-range" },
    description: { type: "string", maxLength: 2000 },
    homepage: { type: "string", maxLength: 2000, pattern: "^https?://\\S+$" },
    capabilities: {
      type: "array",
      maxItems: 64,
      uniqueItems: true,
      items: { type: "string", pattern: CAPABILITY_PATTERN },
    },
  },
});

/** Keys that would set a trust tier: "not part of this capability", refused rather than dropped. */
const TRUST_KEYS = ["trust", "trust_tier", "trustTier"];

/** A manifest that passed its schema: which kind, and the fields the release reads. */
export interface ValidManifest {
  kind: "app" | "mod";
  version: string;
  compatibility?: string;
}

/** 400 codes.manifest_invalid naming one JSON pointer (within the manifest) at fault. */
const manifestInvalid = (pointer: string, message: string, schemaId?: string) =>
  documentInvalid(INVALID, "manifest", [{ pointer, message }], schemaId);

/**
 * Validates an app or mod manifest against its JSON Schema, told apart by
 * `kind` (absent: an app's); faults are refused by their pointers. The
 * contract requires one.
 */
export function validateManifest(manifest: JsonObject): ValidManifest {
  if (Buffer.byteLength(JSON.stringify(manifest)) > MAX_MANIFEST_BYTES) {
    throw manifestInvalid("", `a manifest holds at most ${MAX_MANIFEST_BYTES} bytes of JSON`);
  }
  for (const key of TRUST_KEYS) {
    if (key in manifest) throw manifestInvalid(`/${key}`, "trust tiers are staff metadata and cannot be set here");
  }
  const kind = manifest.kind ?? "app";
  if (kind === "mod") {
    const mod = requireModManifest(manifest, INVALID);
    return { kind, version: mod.version, compatibility: mod.compatibility };
  }
  if (kind !== "app") throw manifestInvalid("/kind", 'must be "app" or "mod"');
  const faults = checkAppManifest(manifest);
  if (faults.length > 0) throw documentInvalid(INVALID, "manifest", faults, "apps/app-manifest.v1");
  return { kind, version: manifest.version as string, compatibility: manifest.compatibility as string | undefined };
}
