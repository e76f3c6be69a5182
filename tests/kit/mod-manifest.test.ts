import type { JsonObject } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { ProblemSchema } from "../../gen/pf/v1/problem_pb.js";
import { validateManifest } from "../../services/codes/domain/manifests.js";
import { MOD_MANIFEST, modManifestFaults } from "../../services/kit/documents/mod-manifest.js";
import { readManifest } from "../../services/games/domain/manifest.js";

/** One mods/mod-manifest.v1 using every member the schema knows. */
const manifest = {
  $schema: MOD_MANIFEST,
  kind: "mod",
  id: "com.example.better-swords",
  name: "Better Swords",
  version: "1.2.0-rc.1+build.7",
  game: "arena",
  capabilities: ["world.read", "chat.send"],
  compatibility: ">=1.4.0 <2.0.0",
  description: "Sharper swords.",
  authors: ["Ada"],
  homepage: "https://example.com/swords",
  entry: "scripts/main.js",
  content: { digest: `sha256:${"a".repeat(64)}` },
} satisfies JsonObject;

/** Each service's check, answering "ok" or the problem's code, pointer and errors. */
const checks: Record<string, (document: JsonObject) => unknown> = {
  codes: (document) => validateManifest(document),
  games: (document) => readManifest(document, 64 * 1024),
};

function outcome(check: (document: JsonObject) => unknown, document: JsonObject): Record<string, unknown> {
  try {
    check(document);
    return { code: "ok" };
  } catch (error) {
    const found = ConnectError.from(error).findDetails(ProblemSchema)[0];
    return { code: found?.code, status: found?.status, ...found?.extensions };
  }
}

describe("mods/mod-manifest.v1: one definition, one meaning in codes and games", () => {
  it("is accepted by both services' checks, with the same compatibility range", () => {
    expect(modManifestFaults(manifest)).toEqual([]);
    for (const [service, check] of Object.entries(checks))
      expect(outcome(check, manifest), service).toEqual({ code: "ok" });
    expect(validateManifest(manifest)).toEqual({
      kind: "mod",
      version: manifest.version,
      compatibility: manifest.compatibility,
    });
    expect(readManifest(manifest, 64 * 1024)).toMatchObject({ id: manifest.id, game: "arena" });
  });

  it("is refused by both when it carries an unknown member, each with its own code, naming the member's pointer", () => {
    const cases: [JsonObject, string][] = [
      [{ granted_capabilities: ["world.read"] }, "/granted_capabilities"],
      [{ game_version: "^1.0.0" }, "/game_version"],
      [{ content: { digest: manifest.content.digest, url: "https://x" } }, "/content/url"],
      [{ "a/b~c": true }, "/a~1b~0c"],
    ];
    for (const [extra, pointer] of cases) {
      for (const [service, check] of Object.entries(checks)) {
        expect(outcome(check, { ...manifest, ...extra }), `${service} ${pointer}`).toMatchObject({
          code: `${service}.manifest_invalid`,
          status: 400,
          field: "manifest",
          pointer,
          errors: [{ pointer, message: "is not a member this schema knows" }],
        });
      }
    }
  });

  it("is refused by both for the same faults: a missing member named itself, a v-prefixed version, a blank range", () => {
    const { game: _game, ...gameless } = manifest;
    const cases: [JsonObject, string][] = [
      [gameless, "/game"],
      [{ ...manifest, version: "v1.2.0" }, "/version"],
      [{ ...manifest, compatibility: " " }, "/compatibility"],
      [{ ...manifest, capabilities: ["world-read.x"] }, "/capabilities/0"],
      [{ ...manifest, homepage: "http://example.com" }, "/homepage"],
      [{ ...manifest, entry: "../outside.js" }, "/entry"],
    ];
    for (const [document, pointer] of cases) {
      for (const [service, check] of Object.entries(checks)) {
        expect(outcome(check, document), `${service} ${pointer}`).toMatchObject({
          code: `${service}.manifest_invalid`,
          pointer,
        });
      }
    }
  });

  it("lists at most 20 faults, the first also as the pointer", () => {
    const many = Object.fromEntries(Array.from({ length: 30 }, (_, index) => [`extra${index}`, index]));
    for (const [service, check] of Object.entries(checks)) {
      const answer = outcome(check, { ...manifest, ...many }) as { pointer: string; errors: { pointer: string }[] };
      expect(answer.errors, service).toHaveLength(20);
      expect(answer.pointer).toBe(answer.errors[0].pointer);
    }
  });
});
