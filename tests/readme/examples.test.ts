import { existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { beforeAll, describe, expect, it } from "vitest";

/**
 * The TypeScript the docs show compiles against the code as it is. Every ```ts block of a Markdown file of the
 * repository is type-checked as a module of its own, with the project's compiler options:
 * - ```ts in=<file> places it beside that file with that file's imports, as if written there;
 * - ```ts no-check: <why> exempts a fragment (a handler's body, a made-up service), saying why.
 * Names a block declares and does not use are not faults (an example need not use what it shows).
 */

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SKIPPED_FOLDERS = new Set(["node_modules", "gen", ".git", ".data"]);
const UNUSED = new Set([6133, 6138, 6192, 6196, 6198, 6199, 6205]);

interface Block {
  document: string;
  /** Where the block's first line of code is in its document (1-based). */
  line: number;
  info: string;
  code: string;
}

function markdownFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    if (entry.isDirectory()) return SKIPPED_FOLDERS.has(entry.name) ? [] : markdownFiles(join(folder, entry.name));
    return entry.isFile() && entry.name.endsWith(".md") ? [join(folder, entry.name)] : [];
  });
}

/** The ```ts and ```typescript blocks of one Markdown file (another language's block is read to its end and left). */
function typescriptBlocks(path: string): Block[] {
  const document = relative(ROOT, path);
  const blocks: Block[] = [];
  let open: { language: string; line: number; info: string; lines: string[] } | undefined;
  readFileSync(path, "utf8")
    .split("\n")
    .forEach((text, index) => {
      const fence = /^\s*```(\S*)\s*(.*)$/.exec(text);
      if (!open) {
        if (fence) open = { language: fence[1], line: index + 2, info: fence[2], lines: [] };
      } else if (fence && fence[1] === "" && fence[2] === "") {
        if (open.language === "ts" || open.language === "typescript")
          blocks.push({ document, line: open.line, info: open.info, code: open.lines.join("\n") });
        open = undefined;
      } else open.lines.push(text);
    });
  return blocks;
}

/** What the info string asks: exempt (with its reason), or checked beside a file (the root when none). */
function modeOf(block: Block): { reason: string } | { beside?: string } {
  const exempt = /^no-check\b:?\s*(.*)$/.exec(block.info);
  if (exempt) return { reason: exempt[1] };
  const beside = /^in=(\S+)$/.exec(block.info);
  return { beside: beside?.[1] };
}

/** The import declarations of a file, written as they are there. */
function importsOf(path: string): string {
  const source = ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest, true);
  return source.statements
    .filter(ts.isImportDeclaration)
    .map((statement) => statement.getText(source))
    .join("\n");
}

const blocks = markdownFiles(ROOT).flatMap(typescriptBlocks);

describe("TypeScript examples in the docs", () => {
  const checked = new Map<Block, { file: string; firstLine: number }>();
  const faults = new Map<Block, string[]>();

  beforeAll(() => {
    const config = ts.readConfigFile(join(ROOT, "tsconfig.json"), (path) => ts.sys.readFile(path));
    const options = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT).options;
    const virtual = new Map<string, string>();
    blocks.forEach((block, index) => {
      const mode = modeOf(block);
      if ("reason" in mode) return;
      const beside = mode.beside ? join(ROOT, mode.beside) : undefined;
      if (beside && !existsSync(beside)) return;
      const prelude = beside ? importsOf(beside) : "";
      const file = join(beside ? dirname(beside) : ROOT, `__docs_example_${index}.ts`);
      // `export {}` keeps a block without imports a module, as every file of the project is.
      virtual.set(file, `${prelude}\n${block.code}\nexport {};\n`);
      checked.set(block, { file, firstLine: prelude === "" ? 1 : prelude.split("\n").length + 1 });
    });
    const host = ts.createCompilerHost(options);
    const readFile = host.readFile.bind(host);
    const getSourceFile = host.getSourceFile.bind(host);
    host.fileExists = (path) => virtual.has(path) || ts.sys.fileExists(path);
    host.readFile = (path) => virtual.get(path) ?? readFile(path);
    host.getSourceFile = (path, version, onError, create) => {
      const text = virtual.get(path);
      return text === undefined
        ? getSourceFile(path, version, onError, create)
        : ts.createSourceFile(path, text, version, true);
    };
    const program = ts.createProgram([...virtual.keys()], options, host);
    for (const [block, { file, firstLine }] of checked) {
      const source = program.getSourceFile(file)!;
      const diagnostics = [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)];
      faults.set(
        block,
        diagnostics
          .filter((diagnostic) => !UNUSED.has(diagnostic.code))
          .map((diagnostic) => {
            const at = source.getLineAndCharacterOfPosition(diagnostic.start ?? 0).line + 1 - firstLine;
            return `${block.document}:${block.line + at}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n")}`;
          }),
      );
    }
  }, 180_000);

  it("finds the docs' examples", () => {
    expect(blocks.length).toBeGreaterThan(5);
  });

  for (const block of blocks) {
    const where = `${block.document}:${block.line - 1}`;
    const mode = modeOf(block);
    if ("reason" in mode) {
      it(`${where} is exempt and says why`, () => {
        expect(mode.reason.split(/\s+/).length, `${where}: ts no-check needs a reason`).toBeGreaterThanOrEqual(3);
      });
      continue;
    }
    it(`${where} compiles${mode.beside ? ` beside ${mode.beside}` : ""}`, () => {
      if (mode.beside)
        expect(existsSync(join(ROOT, mode.beside)), `${where}: in=${mode.beside} names no file`).toBe(true);
      expect(faults.get(block)).toEqual([]);
    });
  }
});
