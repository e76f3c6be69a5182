import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, posix, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * Who may call is declared (`pf.v1.access`, its `relation` for roles, lists and
 * memberships) and enforced once by the kit, so the refusal matrix sees it. A
 * handler calls no editor, staff, role or membership check by hand: these
 * functions answer "is this person on a list or in a role", and a handler
 * calling one decides access outside the contract. Row ownership (the author
 * of this post) stays in handlers and uses none of them, and so does content
 * visibility, which decides what an admitted reader sees (404 as if missing),
 * not who may call: vip membership in blog's and space's `readers.ts`,
 * community's moderators reading hidden threads (`readsAsModerator`, from the
 * token alone; services/community/README.md says why it is not declared).
 *
 * A check is named by the function and, where other services have unrelated
 * functions of that name (vip's and community's `requireOwner`, vip's
 * `managerOf`), by the modules it comes from (`from`: path prefixes from the
 * repository's root, without extension): a call matches by the symbol its
 * name is imported as and that import's module, or by a function of the
 * handler's own file.
 */
interface Check {
  readonly name: string;
  readonly from?: readonly string[];
}

const CHECKS: readonly Check[] = [
  // kit/editors: the editor lists, resolved by the declared `editor` relation.
  { name: "isEditor" },
  { name: "isListedEditor" },
  { name: "requireEditor" },
  { name: "editorRelation" },
  // kit/rpc/vip-membership: a membership of a vip creator.
  { name: "vipMember" },
  // news and reviews' hand-written wrappers of requireEditor, gone into declarations.
  { name: "editorActing" },
  { name: "readsAsEditor" },
  { name: "editorOf" },
  { name: "isEditorCall" },
  // blog's member roles, gone into its declared relations owner, member and post_member (member-roles.ts).
  { name: "requireOwner", from: ["services/blog/"] },
  { name: "requireMember", from: ["services/blog/"] },
  { name: "memberRoles", from: ["services/blog/"] },
  // network's owner of the code-hosting token, gone into its declared relation owner (owner.ts).
  { name: "isNetworkOwner", from: ["services/network/"] },
  { name: "ownerRelation", from: ["services/network/"] },
  // games' managers by network's staff list, gone into its declared relation network_staff (managers.ts).
  { name: "managerOf", from: ["services/games/"] },
  { name: "networkStaff", from: ["services/games/"] },
  // network's staff list read through a client (`ctx.network.listStaff`): whoever reads it decides staff by hand.
  { name: "listStaff" },
];

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

const handlers = readdirSync(join(root, "services"), { recursive: true, encoding: "utf8" })
  .map((file) => `services/${file.split("\\").join("/")}`)
  .filter((file) => /^services\/[^/]+\/handlers\/.+\.ts$/.test(file) && !file.endsWith(".d.ts"));

/** A module a file imports, from the repository's root without extension; a package's name as written. */
function moduleOf(file: string, specifier: string): string {
  if (!specifier.startsWith(".")) return specifier;
  return posix.join(posix.dirname(file), specifier).replace(/\.(js|ts)$/, "");
}

/** Whether a symbol `name` of `module` (undefined: not known) is a check. */
const isCheck = (name: string, module: string | undefined) =>
  CHECKS.some(
    (check) =>
      check.name === name &&
      (check.from === undefined || (module !== undefined && check.from.some((prefix) => module.startsWith(prefix)))),
  );

/** The checks a source calls or imports, as `file:line name`. */
function handCheckedIn(file: string, source: string): string[] {
  const tree = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const own = file.replace(/\.ts$/, "");
  // Local names of the imports: the symbol each stands for and its module (a namespace import: the module alone).
  const imported = new Map<string, { name?: string; module: string }>();
  for (const statement of tree.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
    const module = moduleOf(file, statement.moduleSpecifier.text);
    const bindings = statement.importClause?.namedBindings;
    if (bindings && ts.isNamespaceImport(bindings)) imported.set(bindings.name.text, { module });
    if (bindings && ts.isNamedImports(bindings))
      for (const each of bindings.elements)
        imported.set(each.name.text, { name: (each.propertyName ?? each.name).text, module });
  }
  const found: string[] = [];
  const at = (node: ts.Node, name: string) =>
    found.push(`${file}:${tree.getLineAndCharacterOfPosition(node.getStart()).line + 1} ${name}`);
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node)) {
      const callee = node.expression;
      if (ts.isIdentifier(callee)) {
        // An imported function by the name it is exported as; else one of this file's own.
        const symbol = imported.get(callee.text);
        const name = symbol?.name ?? callee.text;
        if (isCheck(name, symbol ? symbol.module : own)) at(node, name);
      } else if (ts.isPropertyAccessExpression(callee)) {
        // `kit.requireEditor(…)` through a namespace import names its module; any other object's is not known.
        const owner = ts.isIdentifier(callee.expression) ? imported.get(callee.expression.text) : undefined;
        const module = owner !== undefined && owner.name === undefined ? owner.module : undefined;
        if (isCheck(callee.name.text, module)) at(node, callee.name.text);
      }
    }
    if (ts.isImportSpecifier(node)) {
      const declaration = node.parent.parent.parent;
      const name = (node.propertyName ?? node.name).text;
      if (
        ts.isStringLiteral(declaration.moduleSpecifier) &&
        isCheck(name, moduleOf(file, declaration.moduleSpecifier.text))
      )
        at(node, name);
    }
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
    expect(handCheckedIn("x.ts", source)).toEqual(["x.ts:1 isEditor", "x.ts:4 isEditor", "x.ts:5 requireEditor"]);
  });

  it("tells a check by the module its name comes from: blog's requireOwner, not vip's or community's", () => {
    const blog = [`import { requireOwner } from "./roles.js";`, `await requireOwner(ctx, em, blog, call);`];
    expect(handCheckedIn("services/blog/handlers/blogs.ts", blog.join("\n"))).toEqual([
      "services/blog/handlers/blogs.ts:1 requireOwner",
      "services/blog/handlers/blogs.ts:2 requireOwner",
    ]);
    const vip = [`import { requireOwner } from "../domain/access.js";`, `const creator = requireOwner("ref", ref);`];
    expect(handCheckedIn("services/vip/handlers/members.ts", vip.join("\n"))).toEqual([]);
    const community = [`function requireOwner(row, person) {}`, `requireOwner(row, person);`];
    expect(handCheckedIn("services/community/handlers/pastes.ts", community.join("\n"))).toEqual([]);
    // A blog handler's own function of that name is blog's check as well.
    expect(handCheckedIn("services/blog/handlers/x.ts", community.join("\n"))).toEqual([
      "services/blog/handlers/x.ts:2 requireOwner",
    ]);
  });

  it("finds network's owner check, games' managers and staff list reads, not vip's managerOf", () => {
    const network = [
      `import { isNetworkOwner as owner } from "../db/staff.js";`,
      `if (!(await owner(ctx.orm.em.fork(), person))) throw refused;`,
    ];
    expect(handCheckedIn("services/network/handlers/admin.ts", network.join("\n"))).toEqual([
      "services/network/handlers/admin.ts:1 isNetworkOwner",
      "services/network/handlers/admin.ts:2 isNetworkOwner",
    ]);
    const games = [
      `import * as managers from "../managers.js";`,
      `const manager = await managers.managerOf(ctx, call);`,
      `const { staff } = await ctx.network.listStaff({});`,
    ];
    expect(handCheckedIn("services/games/handlers/actions.ts", games.join("\n"))).toEqual([
      "services/games/handlers/actions.ts:2 managerOf",
      "services/games/handlers/actions.ts:3 listStaff",
    ]);
    const vip = [`import { managerOf } from "../domain/access.js";`, `managerOf(caller, owner);`];
    expect(handCheckedIn("services/vip/handlers/plans.ts", vip.join("\n"))).toEqual([]);
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
