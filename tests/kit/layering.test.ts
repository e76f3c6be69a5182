import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * The layers, bottom up: gen/ (generated contracts), services/kit, then the
 * gateway and the services beside each other, then services/host.ts,
 * registry.ts and main.ts, which assemble them. An import only ever points
 * down or within its own part; import cycles are refused everywhere (a
 * type-only import counts: it still ties the two files together).
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

function sourcesUnder(folder: string): string[] {
  return readdirSync(join(root, folder), { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts"))
    .map((file) => join(folder, file).split("\\").join("/"));
}

/** Every relative import of a file's text (static, type-only, re-exports and dynamic), as a path from the root. */
function importsIn(file: string, text: string): string[] {
  const { importedFiles } = ts.preProcessFile(text, true, true);
  return importedFiles
    .map((imported) => imported.fileName)
    .filter((name) => name.startsWith("."))
    .map((name) =>
      relative(root, resolve(root, dirname(file), name))
        .split("\\")
        .join("/")
        .replace(/\.js$/, ".ts"),
    );
}

const files = [...sourcesUnder("services"), ...sourcesUnder("gateway")];
const graph = new Map(files.map((file) => [file, importsIn(file, readFileSync(join(root, file), "utf8"))]));

/** The part of the tree a file belongs to: kit, a service's folder, the gateway, the top (host, registry, main) or gen. */
function partOf(file: string): string {
  const [top, second] = file.split("/");
  if (top !== "services") return top;
  if (second === "kit") return "kit";
  return second.endsWith(".ts") ? "top" : `service ${second}`;
}

/** Import cycles, written `a → b → … → a`: walking the graph finds at least one in every tangle of files. */
function cycles(): string[] {
  const found: string[] = [];
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const visit = (file: string) => {
    state.set(file, "open");
    path.push(file);
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue;
      if (state.get(next) === "open") found.push([...path.slice(path.indexOf(next)), next].join(" → "));
      else if (!state.has(next)) visit(next);
    }
    path.pop();
    state.set(file, "done");
  };
  for (const file of files) if (!state.has(file)) visit(file);
  return found;
}

/** The imports that break a layer's rule, written `from → to`. */
function crossings(allowed: (from: string, to: string) => boolean): string[] {
  return [...graph].flatMap(([file, imports]) =>
    imports.filter((target) => !allowed(partOf(file), partOf(target))).map((target) => `${file} → ${target}`),
  );
}

describe("the layering of services/ and gateway/", () => {
  it("reads the imports of every file: type-only, re-exports and dynamic ones, never those in comments or strings", () => {
    expect(files.length).toBeGreaterThan(100);
    expect(graph.get("services/host.ts")).toContain("gateway/gateway.ts");
    expect(graph.get("services/kit/auth/enforce.ts")).toContain("services/kit/auth/principal.ts");
    const text = [
      `import type { A } from "./a.js";`,
      `export { B } from "../b.js";`,
      `const c = await import("./c.js");`,
      `// import { D } from "./d.js";`,
      `const e = 'import { E } from "./e.js"';`,
      `import { F } from "@bufbuild/protobuf";`,
    ].join("\n");
    expect(importsIn("services/kit/x/y.ts", text)).toEqual([
      "services/kit/x/a.ts",
      "services/kit/b.ts",
      "services/kit/x/c.ts",
    ]);
  });

  it("finds a cycle where there is one (the scanner can fail)", () => {
    const saved = graph.get("services/kit/auth/principal.ts")!;
    graph.set("services/kit/auth/principal.ts", [...saved, "services/kit/auth/enforce.ts"]);
    try {
      const cycle = cycles().find((found) => found.includes("auth/principal.ts"));
      expect(cycle).toMatch(/^services\/kit\/auth\/(enforce|principal)\.ts → .*\1\.ts$/);
      expect(cycle?.split(" → ")).toHaveLength(3);
    } finally {
      graph.set("services/kit/auth/principal.ts", saved);
    }
  });

  it("has no import cycle", () => {
    expect(cycles()).toEqual([]);
  });

  it("keeps the kit below everything: it imports nothing but the kit and gen/", () => {
    expect(crossings((from, to) => from !== "kit" || to === "kit" || to === "gen")).toEqual([]);
  });

  it("keeps each service to its own folder, the kit and gen/: never another service, the gateway or the host", () => {
    expect(
      crossings((from, to) => !from.startsWith("service ") || to === from || to === "kit" || to === "gen"),
    ).toEqual([]);
  });

  it("keeps the gateway off the services and the host: it serves whatever the host hands it", () => {
    expect(crossings((from, to) => from !== "gateway" || to === "gateway" || to === "kit" || to === "gen")).toEqual([]);
  });
});
