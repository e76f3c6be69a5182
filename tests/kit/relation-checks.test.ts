import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * Who may call is declared (`pf.v1.access`, its `relation` for roles, lists and
 * memberships) and enforced once by the kit, so the refusal matrix sees it. A
 * handler calls no editor, staff, role or membership check by hand: these
 * functions answer "is this person on a list or in a role", and a handler
 * calling one decides access outside the contract. Row ownership (the author
 * of this post) stays in handlers and uses none of them.
 */
const CHECKS = [
  // kit/editors: the editor lists, resolved by the declared `editor` relation.
  "isEditor",
  "isListedEditor",
  "requireEditor",
  "editorRelation",
  // kit/rpc/vip-membership: a membership of a vip creator.
  "vipMember",
  // news and reviews' hand-written wrappers of requireEditor, gone into declarations.
  "editorActing",
  "readsAsEditor",
  "editorOf",
  "isEditorCall",
];

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

const handlers = readdirSync(join(root, "services"), { recursive: true, encoding: "utf8" })
  .map((file) => `services/${file.split("\\").join("/")}`)
  .filter((file) => /^services\/[^/]+\/handlers\/.+\.ts$/.test(file) && !file.endsWith(".d.ts"));

/** The checks a source calls or imports, as `file:line name`. */
function handCheckedIn(file: string, source: string): string[] {
  const tree = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const at = (node: ts.Node, name: string) =>
    found.push(`${file}:${tree.getLineAndCharacterOfPosition(node.getStart()).line + 1} ${name}`);
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node)) {
      const callee = node.expression;
      const name = ts.isIdentifier(callee)
        ? callee.text
        : ts.isPropertyAccessExpression(callee)
          ? callee.name.text
          : undefined;
      if (name !== undefined && CHECKS.includes(name)) at(node, name);
    }
    if (ts.isImportSpecifier(node) && CHECKS.includes((node.propertyName ?? node.name).text))
      at(node, (node.propertyName ?? node.name).text);
    ts.forEachChild(node, visit);
  };
  visit(tree);
  return found;
}

describe("relations are declared, never checked by hand in handlers", () => {
  it("finds calls and imports of the checks, aliased or through an object, never in comments or strings", () => {
    const source = [
      `import { isEditor as listed } from "../../kit/editors/editors.js";`,
      `// requireEditor(ctx, call) in a comment`,
      `const text = "vipMember(ctx.vip)";`,
      `await listed(ctx, person);`,
      `await kit.requireEditor(ctx, call);`,
    ].join("\n");
    expect(handCheckedIn("x.ts", source)).toEqual(["x.ts:1 isEditor", "x.ts:5 requireEditor"]);
  });

  it("reads every service's handlers", () => {
    expect(handlers.length).toBeGreaterThan(50);
    expect(handlers).toContain("services/news/handlers/stories.ts");
  });

  it("no handler calls an editor, staff, role or membership check", () => {
    const found = handlers.flatMap((file) => handCheckedIn(file, readFileSync(join(root, file), "utf8")));
    expect(found).toEqual([]);
  });
});
