import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * The layers, bottom up: gen/ (generated contracts), services/kit (itself in
 * layers: KIT_FOLDERS), then the gateway and the services beside each other,
 * then platform/ (host.ts, registry.ts, main.ts), which assembles them. An
 * import only ever points down or within its own part; import cycles are
 * refused everywhere (a type-only import counts: it still ties the two files
 * together).
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

const files = [...sourcesUnder("services"), ...sourcesUnder("gateway"), ...sourcesUnder("platform")];
const graph = new Map(files.map((file) => [file, importsIn(file, readFileSync(join(root, file), "utf8"))]));

/** The part of the tree a file belongs to: kit, a service's folder, the gateway, platform (the assembler) or gen. */
function partOf(file: string): string {
  const [top, second] = file.split("/");
  if (top !== "services") return top;
  return second === "kit" ? "kit" : `service ${second}`;
}

/**
 * The kit's folders, bottom up: a file imports only files of its own folder or
 * of folders below it. The kit's top-level files (`migrations.ts`: every
 * folder's tables) stand above every folder.
 */
const KIT_FOLDERS = [
  "runtime", // settings, clock, logger, tracing, the call scope (request ids, deadlines), sealed secrets
  "handler", // what handlers use on a request: problems, ids, subjects, paging, money, text, URLs, the client's address
  "auth", // tokens, keys, the caller, the one enforcement point, who authored what a call sends
  "outbound", // the one way out of the platform (addresses checked at connect), public hosts
  "rich-text",
  "documents",
  "blobs",
  "db", // the ORM per schema, transactions, hot reads, commit signals
  "writes", // what a write takes in its transaction: idempotency keys, rate limits, caps
  "quotas", // reserve, settle, release: units per key, per window or standing
  "slugs",
  "revisions",
  "events", // outbox, relay, buses, consumers
  "effects",
  "rpc", // the server, guards, clients, rate limits, streams, relations
  "service", // the service runtime: the module and its context, leased workers, housekeeping, metrics
  "search-documents",
  "editors",
  "feeds",
];

/** A kit file's layer: its folder's place in KIT_FOLDERS, the top-level files above them all. */
function kitLayerOf(file: string): number {
  const inKit = file.slice("services/kit/".length);
  return inKit.includes("/") ? KIT_FOLDERS.indexOf(inKit.split("/")[0]) : KIT_FOLDERS.length;
}

/** Imports of a kit file that point up the kit's folder order, written `from → to` (kit-relative). */
function upwardInKit(): string[] {
  return [...graph]
    .filter(([file]) => file.startsWith("services/kit/"))
    .flatMap(([file, imports]) =>
      imports
        .filter((target) => target.startsWith("services/kit/") && kitLayerOf(target) > kitLayerOf(file))
        .map((target) => `${file.slice(13)} → ${target.slice(13)}`),
    );
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

/** Whether a file exports a handler factory: an exported function or const named `…Handlers` (`offerHandlers(ctx)`). */
function exportsHandlerFactory(file: string, text: string): boolean {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest);
  const exported = (node: ts.Node) =>
    ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
  return source.statements.some((statement) => {
    if (!exported(statement)) return false;
    if (ts.isFunctionDeclaration(statement)) return /Handlers$/.test(statement.name?.text ?? "");
    if (ts.isVariableStatement(statement))
      return statement.declarationList.declarations.some(
        (d) => ts.isIdentifier(d.name) && /Handlers$/.test(d.name.text),
      );
    return false;
  });
}

const HANDLER_FILE = /^services\/[^/]+\/handlers\//;

describe("the layering of services/, gateway/ and platform/", () => {
  it("reads the imports of every file: type-only, re-exports and dynamic ones, never those in comments or strings", () => {
    expect(files.length).toBeGreaterThan(100);
    expect(graph.get("platform/host.ts")).toContain("gateway/gateway.ts");
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

  it("keeps the assembler out of services/, which holds the kit and one folder per service", () => {
    const entries = readdirSync(join(root, "services"), { withFileTypes: true });
    expect(entries.filter((entry) => !entry.isDirectory()).map((entry) => entry.name)).toEqual([]);
    expect(crossings((from, to) => to !== "platform" || from === "platform")).toEqual([]);
  });

  it("keeps the kit's folders in their order: nothing imports up it", () => {
    const kitFolders = readdirSync(join(root, "services/kit"), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    expect([...kitFolders].sort()).toEqual([...KIT_FOLDERS].sort());
    expect(upwardInKit()).toEqual([]);
  });

  it("finds an import up the kit's folder order (the check can fail)", () => {
    const saved = graph.get("services/kit/db/orm.ts")!;
    graph.set("services/kit/db/orm.ts", [...saved, "services/kit/slugs/migration.ts"]);
    try {
      expect(upwardInKit()).toContain("db/orm.ts → slugs/migration.ts");
    } finally {
      graph.set("services/kit/db/orm.ts", saved);
    }
  });

  it("keeps handlers/ to RPC handlers: every file there exports a handler factory", () => {
    const helpers = files
      .filter((file) => HANDLER_FILE.test(file))
      .filter((file) => !exportsHandlerFactory(file, readFileSync(join(root, file), "utf8")));
    expect(helpers).toEqual([]);
    expect(exportsHandlerFactory("x.ts", "export function offerHandlers(ctx: C) { return {}; }")).toBe(true);
    expect(exportsHandlerFactory("x.ts", "export const offerHandlers = (ctx: C) => ({});")).toBe(true);
    expect(exportsHandlerFactory("x.ts", "export function offerView() {}\nfunction voteHandlers() {}")).toBe(false);
  });

  it("keeps workers and consumers off handlers/: what they share with a handler lives in domain/ or a root file", () => {
    const runsAlone = /^services\/[^/]+\/(workers|consumers)\//;
    expect(
      [...graph].flatMap(([file, imports]) =>
        runsAlone.test(file)
          ? imports.filter((target) => HANDLER_FILE.test(target)).map((target) => `${file} → ${target}`)
          : [],
      ),
    ).toEqual([]);
  });
});
