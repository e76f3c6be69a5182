import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * Data access in one place: SQL only in a service's db/ (or the kit), and
 * always schema-qualified through the kit (`qualified(em, table)`), never with
 * a schema name written out. Committed migrations are exempt from the second
 * rule: landed migrations are never edited. The same for MikroORM: handlers,
 * workers, consumers and root files only pass an EntityManager along (to named
 * functions of db/), fork one or open a transaction; a raw statement in db/ is
 * the kit's `sql(em, text, params)`, never MikroORM's connection; and no
 * service opens a pool or connection of its own (hot reads and search's
 * statements run on the kit's `HotRead` and `statement`, over the pool
 * MikroORM opened).
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
const kit = (file: string) => file.startsWith("services/kit/");
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

/** What code outside db/ may do with an EntityManager besides passing it along. */
const PASSED_ALONG = new Set(["fork", "transaction"]);

/**
 * Where a file uses MikroORM's EntityManager itself (`em.find(…)`, `tx.create(…)`, `orm.em.fork().findOne(…)`,
 * `…getConnection()`), where it takes MikroORM's connection (`getConnection()`, whatever it is called on), and where
 * it reaches a pool or connection of its own (`new Pool(…)`, a value imported from `pg`, `getNativeClient()`). An
 * EntityManager is known by its name `em`, a parameter typed `EntityManager`, the callback's parameter of a
 * `transaction(…)`, a variable holding a fork, or an expression ending in `.em`/`.fork()`.
 */
function scanAccess(file: string, source: string): { managerCalls: string[]; connections: string[]; pools: string[] } {
  const tree = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const managers = new Set(["em"]);
  const managerCalls: string[] = [];
  const connections: string[] = [];
  const pools: string[] = [];
  const where = (node: ts.Node) => `${file}:${tree.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
  const isManager = (node: ts.Expression): boolean => {
    if (ts.isParenthesizedExpression(node) || ts.isNonNullExpression(node)) return isManager(node.expression);
    if (ts.isIdentifier(node)) return managers.has(node.text);
    if (ts.isPropertyAccessExpression(node)) return node.name.text === "em";
    return ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)
      ? node.expression.name.text === "fork"
      : false;
  };
  const learn = (node: ts.Node): void => {
    if ((ts.isParameter(node) || ts.isVariableDeclaration(node)) && ts.isIdentifier(node.name)) {
      const typed = node.type !== undefined && /\bEntityManager\b/.test(node.type.getText(tree));
      const forked = ts.isVariableDeclaration(node) && node.initializer !== undefined && isManager(node.initializer);
      if (typed || forked) managers.add(node.name.text);
    }
    if (
      ts.isCallExpression(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      node.expression.name.text === "transaction"
    ) {
      const work = node.arguments.find((argument) => ts.isArrowFunction(argument) || ts.isFunctionExpression(argument));
      const first = work && (work as ts.ArrowFunction).parameters[0];
      if (first && ts.isIdentifier(first.name)) managers.add(first.name.text);
    }
    ts.forEachChild(node, learn);
  };
  learn(tree);
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const { name, expression } = node.expression;
      if (name.text === "getConnection" || (isManager(expression) && !PASSED_ALONG.has(name.text)))
        managerCalls.push(`${where(node)}: ${node.expression.getText(tree)}(…)`);
      if (name.text === "getConnection") connections.push(`${where(node)}: getConnection()`);
      if (name.text === "getNativeClient") pools.push(`${where(node)}: getNativeClient()`);
    }
    if (ts.isNewExpression(node) && /^(pg\.)?(Pool|Client)$/.test(node.expression.getText(tree)))
      pools.push(`${where(node)}: new ${node.expression.getText(tree)}(…)`);
    if (
      ts.isImportDeclaration(node) &&
      ts.isStringLiteral(node.moduleSpecifier) &&
      /^pg(-pool)?$/.test(node.moduleSpecifier.text) &&
      !node.importClause?.isTypeOnly
    )
      pools.push(`${where(node)}: import from "${node.moduleSpecifier.text}"`);
    ts.forEachChild(node, visit);
  };
  visit(tree);
  return { managerCalls, connections, pools };
}

const scanned = files.map((file) => {
  const source = readFileSync(join(root, file), "utf8");
  return { file, ...scan(file, source), ...scanAccess(file, source) };
});

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

describe("the EntityManager and pool scanner", () => {
  const calls = (source: string) => scanAccess("x.ts", source).managerCalls.map((found) => found.split(": ")[1]);

  it("finds an EntityManager used outside db/, whatever it is called", () => {
    expect(
      calls(
        [
          "await em.findOne(PlanRow, { id });",
          "ctx.transaction((tx) => tx.create(MembershipRow, row));",
          "const row = await ctx.orm.em.fork().findOne(PolicyRow, { id });",
          "const reader = ctx.orm.em.fork(); await reader.find(Row, {});",
          "async function f(m: EntityManager) { await m.flush(); }",
          "await em.remove(row).flush();",
          "await orm.em.getConnection().execute('x');",
        ].join("\n"),
      ),
    ).toEqual([
      "em.findOne(…)",
      "tx.create(…)",
      "ctx.orm.em.fork().findOne(…)",
      "reader.find(…)",
      "m.flush(…)",
      "em.remove(…)",
      "orm.em.getConnection(…)",
    ]);
  });

  it("lets code pass an EntityManager along, fork one and open a transaction", () => {
    const source = [
      "const em = ctx.orm.em.fork();",
      "await planById(em, id);",
      "await ctx.transaction(async (em) => changePlan(em, plan, {}));",
      "const rows = list.find((row) => row.id === id); items.count(); create(Schema, {});",
    ].join("\n");
    expect(calls(source)).toEqual([]);
  });

  it("finds MikroORM's connection taken, whatever it is called on", () => {
    const found = scanAccess(
      "x.ts",
      [
        "await em.getConnection().execute(sql, [a], 'all', em.getTransactionContext());",
        "const connection = tx.getConnection();",
        "await sql(em, 'select 1 from {t}');",
      ].join("\n"),
    ).connections;
    expect(found).toEqual(["x.ts:1: getConnection()", "x.ts:2: getConnection()"]);
  });

  it("finds a pool or connection of a service's own", () => {
    const found = scanAccess(
      "x.ts",
      [
        'import { Pool } from "pg";',
        'import type { Pool as P } from "pg";',
        "const pool = new Pool({ connectionString });",
        "const client = new pg.Client();",
        "const native = await orm.em.getConnection().getNativeClient();",
      ].join("\n"),
    ).pools;
    expect(found.map((where) => where.split(": ")[1])).toEqual([
      'import from "pg"',
      "new Pool(…)",
      "new pg.Client(…)",
      "getNativeClient()",
    ]);
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

  it("is reached through named functions of db/: no EntityManager method but fork and transaction outside db/ and the kit", () => {
    const outside = scanned.filter(({ file }) => !mayHoldSql(file));
    expect(outside.flatMap(({ managerCalls }) => managerCalls)).toEqual([]);
  });

  it("runs a raw statement through the kit's `sql(em, text, params)`: no `getConnection` in a service, db/ included", () => {
    const found = scanned.filter(({ file }) => !kit(file)).flatMap(({ connections }) => connections);
    expect(
      found,
      "run a raw statement with sql(em, text, params) of services/kit/db/sql.ts (`{table}` names, the caller's transaction)",
    ).toEqual([]);
  });

  it("runs on the pool MikroORM opened: no service opens a pool or connection of its own", () => {
    expect(scanned.filter(({ file }) => !kit(file)).flatMap(({ pools }) => pools)).toEqual([]);
  });
});
