import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  activeCapabilities,
  applyChange,
  type Change,
  type InstallState,
} from "../../services/games/domain/installs.js";
import { canonicalJson, readContentPack, readManifest } from "../../services/games/domain/manifest.js";
import { contentPack, manifest } from "./support.js";

const MAX = 256 * 1024;

describe("manifests and content packs", () => {
  it("reads a valid manifest: its fields, capabilities sorted", () => {
    const read = readManifest(manifest({ id: "com.example.swords", capabilities: ["world.read", "chat.send"] }), MAX);
    expect(read).toMatchObject({ id: "com.example.swords", version: "1.0.0", game: "arena" });
    expect(read.capabilities).toEqual(["chat.send", "world.read"]);
  });

  it("names a missing member and an unknown member by their own pointer", () => {
    const { name: _name, ...nameless } = manifest();
    expect(() => readManifest(nameless, MAX)).toThrow(/\/name/);
    expect(() => readManifest(manifest({ "a/b": 1 }), MAX)).toThrow(/\/a~1b/);
  });

  it("refuses a manifest over its cap with 413", () => {
    expect(() => readManifest(manifest({ description: "x".repeat(2000) }), 1024)).toThrow(/at most 1024/);
  });

  it("canonical JSON ignores member order, so the digest does too", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.oneof(fc.integer(), fc.string(), fc.boolean())), (object) => {
        const reversed = Object.fromEntries(Object.entries(object).reverse());
        expect(canonicalJson(reversed)).toBe(canonicalJson(object));
        expect(JSON.parse(canonicalJson(object))).toEqual(object);
      }),
    );
    const pack = contentPack();
    const reordered = { assets: pack.assets, entries: pack.entries };
    expect(readContentPack(reordered, MAX).digest).toBe(readContentPack(pack, MAX).digest);
    expect(readContentPack(contentPack({ $schema: "games-content@1" }), MAX).digest).not.toBe(
      readContentPack(pack, MAX).digest,
    );
  });
});

describe("manage rules", () => {
  const changes: fc.Arbitrary<Change> = fc.oneof(
    fc.constantFrom<Change>({ action: "enabled" }, { action: "disabled" }, { action: "revoked" }),
    fc.record({
      action: fc.constantFrom("granted" as const, "ungranted" as const),
      capability: fc.constantFrom("a.one", "a.two", "a.three", "not.requested"),
    }),
  );

  it("keep granted ⊆ requested, take nothing after revoke, and activate grants only while enabled", () => {
    fc.assert(
      fc.property(fc.array(changes, { maxLength: 30 }), (sequence) => {
        let state: InstallState = { status: "disabled", requested: ["a.one", "a.three", "a.two"], granted: [] };
        for (const change of sequence) {
          let next;
          try {
            next = applyChange(state, change);
          } catch (error) {
            const message = (error as Error).message;
            if (state.status === "revoked") expect(message).toMatch(/revoked for good/);
            else expect(message).toMatch(/does not request not\.requested/);
            continue;
          }
          expect(state.status).not.toBe("revoked");
          if (next) state = { ...state, ...next };
          for (const capability of state.granted) expect(state.requested).toContain(capability);
          expect(activeCapabilities(state.status, state.granted)).toEqual(
            state.status === "enabled" ? state.granted : [],
          );
        }
      }),
    );
  });
});
