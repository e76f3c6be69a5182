import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * Tests wait for something observable with `until(check)` from tests/support/until.ts, never with a fixed sleep: a
 * negative wait ("nothing came in 500 ms") passes trivially on a slow machine. Timers are allowed only in the named
 * helpers of tests/support that say why: `until` itself, fixtures whose pace is what is tested (`every`), a bound
 * on what may hang (`watchdog`), and a memory sampler (`peakGrowth`).
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** The helpers that may start a timer: file → the functions in it that may. */
const ALLOWED: Record<string, string[]> = {
  "tests/support/until.ts": ["until"],
  "tests/support/timers.ts": ["every", "watchdog"],
  "tests/support/memory.ts": ["peakGrowth"],
};

/** Calls that start a timer or sleep, by the name called (`setTimeout(…)`, `globalThis.setTimeout(…)`, `sleep(…)`). */
const TIMERS = new Set(["setTimeout", "setInterval", "sleep", "delay"]);
/** Modules whose promises are timers (`await setTimeout(100)` from node:timers/promises). */
const TIMER_MODULES = /^(node:)?timers(\/promises)?$/;

const files = readdirSync(join(root, "tests"), { recursive: true, encoding: "utf8" })
  .filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts"))
  .map((file) => `tests/${file.split("\\").join("/")}`);

/** The name of the function (declaration, method or `const name = () => …`) a node is inside, innermost first. */
function enclosing(node: ts.Node): string[] {
  const names: string[] = [];
  for (let at: ts.Node | undefined = node.parent; at; at = at.parent) {
    if ((ts.isFunctionDeclaration(at) || ts.isMethodDeclaration(at)) && at.name) names.push(at.name.getText());
    if (
      (ts.isArrowFunction(at) || ts.isFunctionExpression(at)) &&
      ts.isVariableDeclaration(at.parent) &&
      ts.isIdentifier(at.parent.name)
    )
      names.push(at.parent.name.text);
  }
  return names;
}

/** Where a file starts a timer or sleeps outside the helpers allowed to. */
function timersIn(file: string, source: string): string[] {
  const tree = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const allowed = ALLOWED[file] ?? [];
  const where = (node: ts.Node) => `${file}:${tree.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node)) {
      const callee = node.expression;
      const name = ts.isIdentifier(callee)
        ? callee.text
        : ts.isPropertyAccessExpression(callee)
          ? callee.name.text
          : undefined;
      if (name && TIMERS.has(name) && !enclosing(node).some((fn) => allowed.includes(fn)))
        found.push(`${where(node)}: ${name}(…)`);
    }
    // Handed over without a call (`new Promise((resolve) => setTimeout(resolve, …))` is caught above).
    if (ts.isIdentifier(node) && TIMERS.has(node.text) && ts.isCallExpression(node.parent)) {
      const call = node.parent;
      if (call.arguments.includes(node) && !enclosing(node).some((fn) => allowed.includes(fn)))
        found.push(`${where(node)}: ${node.text} passed along`);
    }
    if (
      ts.isImportDeclaration(node) &&
      ts.isStringLiteral(node.moduleSpecifier) &&
      TIMER_MODULES.test(node.moduleSpecifier.text)
    )
      found.push(`${where(node)}: import from ${node.moduleSpecifier.text}`);
    ts.forEachChild(node, visit);
  };
  visit(tree);
  return found;
}

describe("waiting in tests", () => {
  it("is done with until() on something observable: no setTimeout, setInterval or sleep outside the allowed helpers", () => {
    const found = files.flatMap((file) => timersIn(file, readFileSync(join(root, file), "utf8")));
    expect(found).toEqual([]);
  });

  it("finds a fixed sleep however it is written, and allows only the named helpers", () => {
    const sleeps = [
      "await new Promise((resolve) => setTimeout(resolve, 500));",
      "const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms)); await sleep(20);",
      "await globalThis.setTimeout(() => undefined, 5);",
      'import { setTimeout as wait } from "node:timers/promises";',
      "const timer = setInterval(() => ticks++, 10);",
      "await delay(100);",
    ];
    for (const source of sleeps) expect(timersIn("tests/x/a.test.ts", source), source).not.toEqual([]);
    expect(timersIn("tests/x/a.test.ts", "await until(() => seen.length > 0);")).toEqual([]);
    const helper = "export function every(ms: number, tick: () => void) { const t = setInterval(tick, ms); }";
    expect(timersIn("tests/support/timers.ts", helper)).toEqual([]);
    // The same helper anywhere else, or another function in the allowed file, is found.
    expect(timersIn("tests/support/other.ts", helper)).not.toEqual([]);
    expect(timersIn("tests/support/timers.ts", "export function pause() { setTimeout(() => 1, 5); }")).not.toEqual([]);
  });
});
