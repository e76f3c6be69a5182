import type { JsonObject } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { ProblemSchema } from "../../gen/pf/v1/problem_pb.js";
import { validateManifest } from "../../services/codes/domain/manifests.js";
import {
  checkReplacement,
  compatibilityOf,
  transition,
  versionKey,
  type Action,
  type Status,
} from "../../services/codes/domain/releases.js";

const codeOf = (work: () => unknown) => {
  try {
    work();
    return "ok";
  } catch (error) {
    return ConnectError.from(error).findDetails(ProblemSchema)[0]?.code ?? String(error);
  }
};

describe("the release state machine", () => {
  const table: [Status, Action, Status | "409"][] = [
    ["draft", "publish", "published"],
    ["draft", "deprecate", "409"],
    ["draft", "revoke", "revoked"],
    ["published", "publish", "409"],
    ["published", "deprecate", "deprecated"],
    ["published", "revoke", "revoked"],
    ["deprecated", "publish", "409"],
    ["deprecated", "deprecate", "409"],
    ["deprecated", "revoke", "revoked"],
    ["revoked", "publish", "409"],
    ["revoked", "deprecate", "409"],
    ["revoked", "revoke", "409"],
  ];
  it.each(table)("%s --%s--> %s", (from, action, to) => {
    if (to === "409") expect(codeOf(() => transition(from, action))).toBe("codes.release_state");
    else expect(transition(from, action)).toBe(to);
  });
});

describe("versions and ranges", () => {
  it("a version's key leaves out build metadata, keeps pre-releases", () => {
    expect(versionKey("1.2.3+build.9")).toBe("1.2.3");
    expect(versionKey("1.2.3-rc.1+x")).toBe("1.2.3-rc.1");
  });

  it("compatibility: the request's or the manifest's, agreeing, a semver range", () => {
    expect(compatibilityOf("", "^1.2")).toBe("^1.2");
    expect(compatibilityOf(" >=1 <2 ", undefined)).toBe(">=1 <2");
    expect(compatibilityOf("^1.2", "^1.2")).toBe("^1.2");
    for (const [sent, manifest] of [
      ["", undefined],
      ["not a range", undefined],
      ["^1", "^2"],
    ] as const) {
      expect(
        codeOf(() => compatibilityOf(sent, manifest)),
        JSON.stringify([sent, manifest]),
      ).toBe("request.invalid");
    }
  });

  it("a replacement is a published release of the same app, not the release itself", () => {
    const release = { id: "rel_a", app: "app1" };
    expect(codeOf(() => checkReplacement(release, "rel_b", { id: "rel_b", app: "app1", status: "published" }))).toBe(
      "ok",
    );
    for (const facts of [
      null,
      { id: "rel_b", app: "app2", status: "published" },
      { id: "rel_b", app: "app1", status: "draft" },
      { id: "rel_b", app: "app1", status: "revoked" },
      { id: "rel_a", app: "app1", status: "published" },
    ]) {
      expect(
        codeOf(() => checkReplacement(release, "rel_b", facts)),
        JSON.stringify(facts),
      ).toBe("codes.replacement_invalid");
    }
  });
});

describe("manifests (JSON Schema)", () => {
  it("takes app manifests (kind optional), keeping fields it does not know, and mod manifests", () => {
    expect(validateManifest({ name: "A", version: "1.0.0", extra: { any: true } })).toEqual({
      kind: "app",
      version: "1.0.0",
      compatibility: undefined,
    });
    const mod = { kind: "mod", id: "m-1", name: "M", version: "0.1.0", game: "arena", capabilities: [] };
    expect(validateManifest({ ...mod, compatibility: "^1" })).toMatchObject({ kind: "mod", compatibility: "^1" });
  });

  it("names the JSON pointer of the first fault, escaped per RFC 6901", () => {
    const pointerOf = (manifest: JsonObject) => {
      try {
        validateManifest(manifest);
        return "ok";
      } catch (error) {
        return ConnectError.from(error).findDetails(ProblemSchema)[0]?.extensions?.pointer;
      }
    };
    expect(pointerOf({ name: "A", version: "1.0" })).toBe("/version");
    expect(pointerOf({ name: "A", version: " 1.0.0" })).toBe("/version");
    expect(pointerOf({ name: "", version: "1.0.0" })).toBe("/name");
    expect(pointerOf({ name: "A", version: "1.0.0", homepage: "ftp://x" })).toBe("/homepage");
    const mod = { kind: "mod", id: "m-1", name: "A", version: "1.0.0", game: "arena", capabilities: [] };
    expect(pointerOf({ ...mod, id: "Bad Id" })).toBe("/id");
    expect(pointerOf({ ...mod, "a/b~c": 1 })).toBe("/a~1b~0c");
    expect(pointerOf({ ...mod, version: "1.0.0 " })).toBe("/version");
    expect(pointerOf({ name: "A", version: "1.0.0", capabilities: ["a.b", "a.b"] })).toBe("/capabilities");
  });
});
