import { createHash } from "node:crypto";
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { documentInvalid, schemaCheck, type Fault } from "../../kit/documents/json-schema.js";
import { requireModManifest } from "../../kit/documents/mod-manifest.js";
import { problem } from "../../kit/handler/problem.js";
import { contentSchema } from "./schemas.js";

const contentFaults = schemaCheck(contentSchema);

/** A manifest as the install keeps it: the fields read from it, and the document. */
export interface Manifest {
  id: string;
  name: string;
  version: string;
  game: string;
  capabilities: string[];
  /** The content digest the manifest pins, if it does. */
  contentDigest?: string;
  document: JsonObject;
}

/** A content pack with its canonical size and digest. */
export interface ContentPack {
  digest: string;
  size: number;
  document: JsonObject;
}

/**
 * The JSON value in one canonical form: object keys sorted (by code unit), no
 * spaces, numbers as JavaScript prints them. Its sha256 is the pack's digest,
 * so the same content gives the same digest however it was sent.
 */
export function canonicalJson(value: JsonValue): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const keys = Object.keys(value).sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

function requireSize(code: string, field: string, canonical: string, maxBytes: number): number {
  const size = Buffer.byteLength(canonical);
  if (size > maxBytes)
    throw problem(413, code, `The ${field} is ${size} bytes; at most ${maxBytes} are taken.`, {
      field,
      max_bytes: maxBytes,
    });
  return size;
}

/** The pointers of repeated values (second and later) in a list, by a key of each item. */
function repeated<T>(items: T[], base: string, member: string, keyOf: (item: T) => string): Fault[] {
  const seen = new Set<string>();
  const faults: Fault[] = [];
  items.forEach((item, index) => {
    const key = keyOf(item);
    if (seen.has(key)) faults.push({ pointer: `${base}/${index}/${member}`, message: "repeats an earlier one" });
    seen.add(key);
  });
  return faults;
}

/** Checks a manifest against the kit's mods/mod-manifest.v1 (400 games.manifest_invalid naming the JSON pointer). */
export function readManifest(document: JsonObject, maxBytes: number): Manifest {
  requireSize("games.manifest_too_large", "manifest", canonicalJson(document), maxBytes);
  const manifest = requireModManifest(document, "games.manifest_invalid");
  return {
    id: manifest.id,
    name: manifest.name,
    version: manifest.version,
    game: manifest.game,
    capabilities: [...manifest.capabilities].sort(),
    contentDigest: manifest.content?.digest,
    document,
  };
}

/**
 * Checks a content pack against games-content@1 (400 games.content_invalid
 * naming the JSON pointer; entries unique by kind and id, asset paths unique)
 * and answers its canonical size and digest.
 */
export function readContentPack(document: JsonObject, maxBytes: number): ContentPack {
  const canonical = canonicalJson(document);
  const size = requireSize("games.content_too_large", "content_pack", canonical, maxBytes);
  const invalid = (faults: Fault[]) =>
    documentInvalid("games.content_invalid", "content_pack", faults, "games-content@1");
  const malformed = contentFaults(document);
  if (malformed.length > 0) throw invalid(malformed);
  // The schema made these strings.
  const entries = document.entries as { kind: string; id: string }[];
  const assets = (document.assets ?? []) as { path: string }[];
  const faults = [
    ...repeated(entries, "/entries", "id", (entry) => `${entry.kind}\u0000${entry.id}`),
    ...repeated(assets, "/assets", "path", (asset) => asset.path),
  ];
  if (faults.length > 0) throw invalid(faults);
  return { digest: `sha256:${createHash("sha256").update(canonical).digest("hex")}`, size, document };
}

/** A manifest that pins its content pack must be given that pack (400 games.content_digest_mismatch). */
export function requirePinnedContent(manifest: Manifest, pack: ContentPack): void {
  if (manifest.contentDigest === undefined || manifest.contentDigest === pack.digest) return;
  throw problem(
    400,
    "games.content_digest_mismatch",
    `The manifest pins the content pack ${manifest.contentDigest}, but the pack sent is ${pack.digest}.`,
    { field: "manifest", pointer: "/content/digest", digest: pack.digest },
  );
}
