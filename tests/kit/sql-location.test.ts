import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * Data access in one place: SQL only in a service's db/ (or the kit), and
 * always schema-qualified through the kit (`qualified(em, table)`), never with
 * a schema name written out. Committed migrations are exempt from the second
 * rule: landed migrations are never edited.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

const files = ["services", "gateway", "platform"].flatMap((folder) =>
  readdirSync(join(root, folder), { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts"))
    .map((file) => `${folder}/${file.split("\\").join("/")}`),
);

/** The service schemas: one per service folder. */
const schemas = readdirSync(join(root, "services"), { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && entry.name !== "kit")
  .map((entry) => entry.name);

const mayHoldSql = (file: string) => /^services\/([^/]+\/db|kit)\//.test(file);
const migration = (file: string) => /^services\/[^/]+\/db\/migrations\//.test(file);

/**
 * SQL keywords are written all lower-case or all upper-case; prose writes
 * "Update the goal" or "select a plan", never `update <table> set`.
 */
const words = (...list: string[]) => list.map((word) => `${word}|${word.toUpperCase()}`).join("|");
const NAME = String.raw`[\w."$]`;
const STATEMENTS = [
  // A select opens the string, a subquery or a union: "…you can select a plan from the list" is prose.
  new RegExp(
    String.raw`(^\s*|\(\s*|\b(${words("union")})(\s+(${words("all")}))?\s+)(${words("select")})\s[\s\S]*?\b(${words("from")})\s+${NAME}`,
  ),
  new RegExp(String.raw`^\s*(${words("select")})\s+\w+\(`),
  new RegExp(String.raw`\b(${words("insert")})\s+(${words("into")})\s+${NAME}`),
  new RegExp(String.raw`\b(${words("update")})\s+${NAME}+(\s+(${words("as")})?\s*\w+)?\s+(${words("set")})\s`),
  new RegExp(String.raw`\b(${words("delete")})\s+(${words("from")})\s+${NAME}`),
  new RegExp(
    String.raw`\b(${words("create", "alter", "drop", "truncate")})\s+(${words("table", "index", "schema", "trigger", "function")})\b`,
  ),
];

/**
 * A schema name written out (`billing.entries`, `"network"."coin_accounts"`):
 * anywhere in SQL, and after a keyword naming a table in any other string.
 * Event subjects and capabilities (`billing.intent.created`) have more dots.
 */
const schemaNamed = (sql: boolean) => {
  const before = sql ? String.raw`(^|[\s(,])` : String.raw`\b(from|join|into|update|table|references)\s+`;
  return new RegExp(String.raw`${before}"?(${schemas.join("|")})"?\."?[a-z_]\w*"?(?![.\w])`);
};

/** The text of a string or template literal; a template's substitutions read as `$x`. */
function literalText(node: ts.Node): string | undefined {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isTemplateExpression(node))
    return node.head.text + node.templateSpans.map((span) => `$x${span.literal.text}`).join("");
  return undefined;
}

interface Finding {
  where: string;
  text: string;
  sql: boolean;
}

/** The literals and raw-SQL calls (`.execute(…)`) of a file's source, comments left out. */
function scan(file: string, source: string): { literals: Finding[]; executes: string[] } {
  const tree = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const literals: Finding[] = [];
  const executes: string[] = [];
  const where = (node: ts.Node) => `${file}:${tree.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
  const visit = (node: ts.Node): void => {
    const text = literalText(node);
    if (text !== undefined) {
      literals.push({ where: where(node), text, sql: STATEMENTS.some((statement) => statement.test(text)) });
      // A template's substitutions may hold literals of their own.
      if (ts.isTemplateExpression(node)) node.templateSpans.forEach((span) => visit(span.expression));
      return;
    }
    if (
      ts.isCallExpression(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      node.expression.name.text === "execute" &&
      node.arguments.length > 0
    ) {
      executes.push(where(node));
    }
    ts.forEachChild(node, visit);
  };
  visit(tree);
  return { literals, executes };
}

const scanned = files.map((file) => ({ file, ...scan(file, readFileSync(join(root, file), "utf8")) }));

describe("the scanner", () => {
  const sqlOf = (source: string) =>
    scan("x.ts", source)
      .literals.filter((found) => found.sql)
      .map((found) => found.text);

  it("finds SQL in strings and templates, whatever the case of its keywords", () => {
    // eslint-disable-next-line no-template-curly-in-string -- source text under test
    expect(sqlOf("const a = `select id from ${qualified(em, 'x')} where y = ?`;")).toEqual([
      "select id from $x where y = ?",
    ]);
    expect(
      sqlOf(`q("SELECT id FROM t"); q('insert into t (a) values (?)'); q("update t set a = 1"); q("delete from t")`),
    ).toHaveLength(4);
    expect(
      // eslint-disable-next-line no-template-curly-in-string -- source text under test
      sqlOf("q(`update ${table} as e set a = 1`); q('select pg_advisory_xact_lock(?)'); q('create index i on t (a)')"),
    ).toHaveLength(3);
    expect(sqlOf("q(`with w as (select a from t) select * from w`)")).toHaveLength(1);
  });

  it("leaves prose, comments and code alone", () => {
    const prose = [
      `problem(400, "x", "Nothing to update: send offer fields or an observation.");`,
      `problem(422, "x", "Update the goal before you close it; select a plan from the list.");`,
      `problem(409, "x", "Credit is sold from 1 to 5 minor units; delete the draft first.");`,
      "// select id from t where a = 1",
      "/* insert into t values (1) */",
      "const update = (a: number) => a; update(1); hash.update(body);",
    ].join("\n");
    expect(sqlOf(prose)).toEqual([]);
  });

  it("finds a raw SQL call and a schema name written out", () => {
    const found = scan(
      "x.ts",
      "await em.getConnection().execute(sql, [a]);\nconst s = `select * from billing.entries`;",
    );
    expect(found.executes).toEqual(["x.ts:1"]);
    expect(schemaNamed(true).test(found.literals[0].text)).toBe(true);
    expect(schemaNamed(false).test('join "network"."coin_accounts" a')).toBe(true);
    expect(schemaNamed(true).test("select * from $x where kind = 'billing.intent.created'")).toBe(false);
  });
});

describe("SQL in services/", () => {
  it("is found where it is allowed (the kit and db/ folders hold some)", () => {
    expect(
      scanned.filter(({ file }) => mayHoldSql(file)).flatMap(({ literals }) => literals.filter((found) => found.sql))
        .length,
    ).toBeGreaterThan(10);
  });

  it("is only in a service's db/ folder or the kit: no SQL in handlers/, domain/, workers/, consumers/ or the gateway", () => {
    const outside = scanned.filter(({ file }) => !mayHoldSql(file));
    const statements = outside.flatMap(({ literals }) =>
      literals.filter((found) => found.sql).map((found) => `${found.where}: ${found.text.trim().slice(0, 80)}`),
    );
    const calls = outside.flatMap(({ executes }) => executes.map((where) => `${where}: .execute(…)`));
    expect([...statements, ...calls]).toEqual([]);
  });

  it("never writes a schema name out: tables are qualified through the kit (`qualified(em, table)`)", () => {
    const named = scanned
      .filter(({ file }) => !migration(file))
      .flatMap(({ literals }) => literals.filter((found) => schemaNamed(found.sql).test(found.text)))
      .map((found) => `${found.where}: ${found.text.trim().slice(0, 80)}`);
    expect(named).toEqual([]);
  });
});
