import { getOption, type DescService } from "@bufbuild/protobuf";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { bindingsOf } from "../../gateway/bindings.js";
import { designed } from "../../gen/pf/v1/options_pb.js";
import { modules } from "../../platform/registry.js";
import { editorRelation } from "../../services/kit/editors/editors.js";
import { documentedRoutes, SPEC } from "../support/access.js";
import { itWith } from "../support/skips.js";

/**
 * The facts the docs state that drift as the code grows, checked against the code: the services running (README,
 * docs/architecture.md, the registry), one proto package per service, the routes each service serves (its README's
 * "It serves N HTTP routes …", the gateway's bindings and routes.tsv), each service's anatomy and its exceptions
 * (docs/conventions.md), and the settings (every PF_* setting the code reads is in the README's environment table and
 * its owner's README, and every one listed is read).
 */

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");
const README = read("README.md");
const ARCHITECTURE = read("docs/architecture.md");
const KEYS = modules.map((module) => module.key);
const sorted = (names: Iterable<string>) => [...new Set(names)].sort();

describe("the services running", () => {
  it("are the registry's, in the README's list and count", () => {
    const heading = /Services running today \((\d+) of (\d+)/.exec(README);
    expect(heading, "README.md: 'Services running today (N of M' is gone").not.toBeNull();
    const list = README.slice(heading!.index).split("\n\n")[1];
    const listed = [...list.matchAll(/^- \*\*(\w+)\*\*:/gm)].map((match) => match[1]);
    expect(sorted(listed)).toEqual(sorted(KEYS));
    expect(Number(heading![1])).toBe(KEYS.length);
  });

  it("are the registry's in docs/architecture.md, among its services of the README's count", () => {
    const all = /A backend of (\d+) services[^`]*`([^`]+)`/.exec(ARCHITECTURE);
    expect(all, "docs/architecture.md: 'A backend of N services … `keys`' is gone").not.toBeNull();
    const every = all![2].split(/\s+/);
    expect(every).toHaveLength(Number(all![1]));
    expect(README).toContain(`of ${every.length} services`);
    expect(README).toContain(`(${KEYS.length} of ${every.length};`);
    expect(KEYS.filter((key) => !every.includes(key))).toEqual([]);
    const running = /(\d+) run\s+today — ([^(—]+)/.exec(ARCHITECTURE);
    expect(running, "docs/architecture.md: 'N run today — keys' is gone").not.toBeNull();
    expect(Number(running![1])).toBe(KEYS.length);
    expect(sorted(running![2].split(/[\s,]+/).filter((key) => key !== ""))).toEqual(sorted(KEYS));
  });

  it("each serve proto services of their own package only", () => {
    const strays = modules.flatMap((module) =>
      module.protos.filter((proto) => !proto.typeName.startsWith(`pf.${module.key}.v1.`)).map((p) => p.typeName),
    );
    expect(strays).toEqual([]);
  });
});

/** What proto services serve: HTTP bindings as the gateway builds them, by whether designed, and RPCs bound to none. */
function routesServed(services: readonly DescService[]) {
  const bindings = services.flatMap(bindingsOf);
  const designedRoutes = bindings.filter((binding) => getOption(binding.method, designed)).length;
  const unbound = services.flatMap((service) => service.methods).filter((m) => !bindings.some((b) => b.method === m));
  return {
    routes: bindings.length,
    documented: bindings.length - designedRoutes,
    designed: designedRoutes,
    unbound: unbound.length,
    undesignedUnbound: unbound.filter((method) => !getOption(method, designed)).map((m) => m.name),
  };
}

/**
 * A README's statements of routes served, one sentence shape for every service: "It serves N HTTP routes (D
 * documented, G designed) and R designed RPCs with no HTTP route." for the service, "`XService` serves …" for one of
 * its proto services; the last clause only where R is not 0.
 */
const STATEMENT =
  /(It|`(\w+)`) serves (\d+) HTTP routes? \((\d+) documented, (\d+) designed\)(?: and (\d+) designed RPCs? with no HTTP route)?/g;
/** Any other count of routes in digits ("18 routes", "the 3 context routes"); not a status ("404 for a route"). */
const COUNT = /\b\d+ ((?:[\w`-]+ ){0,2})routes?\b/g;
const NOT_A_COUNT = /\b(?:about|after|any|at|before|each|every|for|from|in|of|on|the|to|with)\b/;
/** docs/architecture.md's count of the spec's routes, checked against routes.tsv. */
const SPEC_TOTAL = /the (\d+) documented routes/;
const prose = (path: string) => read(path).replace(/\s+/g, " ");

describe("the routes each service serves", () => {
  it("are stated once in its README as the gateway binds them (and per proto service, where given)", () => {
    const wrong = modules.flatMap((module) => {
      const path = `services/${module.key}/README.md`;
      const statements = [...prose(path).matchAll(STATEMENT)];
      const whole = statements.filter((statement) => statement[1] === "It");
      const problems = whole.length === 1 ? [] : [`${path}: ${whole.length} statements "It serves …", not 1`];
      for (const [sentence, , name, routes, documented, designedRoutes, unbound] of statements) {
        const services = name === undefined ? module.protos : module.protos.filter((proto) => proto.name === name);
        if (services.length === 0) {
          problems.push(`${path}: ${name} is none of ${module.key}'s proto services`);
          continue;
        }
        const served = routesServed(services);
        const stated = [routes, documented, designedRoutes, unbound ?? "0"].map(Number);
        const counted = [served.routes, served.documented, served.designed, served.unbound];
        if (stated.join() !== counted.join())
          problems.push(
            `${path}: "${sentence}", but the code serves ${counted.join("/")} (routes/documented/designed/unbound)`,
          );
      }
      return problems;
    });
    expect(wrong).toEqual([]);
  });

  it("leave no RPC without an HTTP route undesigned (the READMEs count them as designed)", () => {
    const undesigned = modules.flatMap((module) => routesServed(module.protos).undesignedUnbound);
    expect(undesigned).toEqual([]);
  });

  it("are counted nowhere else in digits, in a service's README or the project's docs", () => {
    const paths = [
      "README.md",
      "gateway/README.md",
      ...readdirSync(join(ROOT, "docs")).map((file) => `docs/${file}`),
      ...readdirSync(join(ROOT, "services")).map((key) => `services/${key}/README.md`),
    ];
    const counts = paths
      .filter((path) => existsSync(join(ROOT, path)))
      .flatMap((path) => {
        // Left out: what the tests beside this one check (the statements, architecture.md's count of the spec).
        const rest = prose(path).replace(STATEMENT, "");
        const unchecked = path === "docs/architecture.md" ? rest.replace(SPEC_TOTAL, "") : rest;
        return [...unchecked.matchAll(COUNT)]
          .filter(([, words]) => !NOT_A_COUNT.test(words))
          .map(([count]) => `${path}: ${count}`);
      });
    expect(counts).toEqual([]);
  });

  itWith(SPEC, "documented are the spec's routes.tsv rows, per service and in all (docs/architecture.md)", async () => {
    const wrong: string[] = [];
    for (const module of modules) {
      const rows = (await documentedRoutes(module.key)).length;
      const { documented } = routesServed(module.protos);
      if (rows !== documented)
        wrong.push(`${module.key}: ${documented} documented routes bound, ${rows} in routes.tsv`);
    }
    expect(wrong).toEqual([]);
    // Every service's, running or not: the keys docs/architecture.md lists.
    const total = SPEC_TOTAL.exec(prose("docs/architecture.md"));
    expect(total, "docs/architecture.md: 'the N documented routes' is gone").not.toBeNull();
    const keys = /A backend of \d+ services[^`]*`([^`]+)`/.exec(ARCHITECTURE)![1].split(/\s+/);
    const rows = await Promise.all(keys.map(async (key) => (await documentedRoutes(key)).length));
    expect(Number(total![1])).toBe(rows.reduce((sum, count) => sum + count, 0));
  });
});

/** docs/conventions.md's table of exceptions: a part a service lacks (`no x`), or a folder it has besides. */
function anatomyExceptions(): { lacks: Map<string, string[]>; extra: Map<string, string[]> } {
  const lacks = new Map<string, string[]>();
  const extra = new Map<string, string[]>();
  const rows = read("docs/conventions.md").matchAll(/^\| (no `[^`]+`|`[^`]+\/`)\s*\| ([a-z]+(?:, [a-z]+)*)\s*\|/gm);
  for (const [, part, services] of rows) {
    const keys = services.split(",").map((key) => key.trim());
    if (part.startsWith("no ")) lacks.set(part.slice(4, -1), keys);
    else extra.set(part.slice(1, -1), keys);
  }
  return { lacks, extra };
}

describe("every service's anatomy (docs/conventions.md)", () => {
  const PARTS = ["index.ts", "README.md", "context.ts", "settings.ts", "events.ts", "handlers/", "domain/", "db/"];
  const OPTIONAL = ["workers/", "consumers/"];
  const { lacks, extra } = anatomyExceptions();

  it("lists its exceptions in a table the test reads", () => {
    expect(lacks.size).toBeGreaterThan(0);
    expect([...lacks.keys()].filter((part) => !PARTS.includes(part))).toEqual([]);
  });

  it("has each part the docs name, except where the docs say it has none", () => {
    const wrong = KEYS.flatMap((key) =>
      PARTS.filter((part) => {
        const present = existsSync(join(ROOT, "services", key, part));
        return present === (lacks.get(part) ?? []).includes(key);
      }).map(
        (part) =>
          `services/${key}/${part} ${(lacks.get(part) ?? []).includes(key) ? "is listed as absent" : "is missing"}`,
      ),
    );
    expect(wrong).toEqual([]);
  });

  it("has no other folder than those the docs name", () => {
    const wrong = KEYS.flatMap((key) =>
      readdirSync(join(ROOT, "services", key), { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .map((entry) => `${entry.name}/`)
        .filter((folder) => !PARTS.includes(folder) && !OPTIONAL.includes(folder))
        .filter((folder) => !(extra.get(folder) ?? []).includes(key))
        .map((folder) => `services/${key}/${folder}`),
    );
    const stale = [...extra].flatMap(([folder, keys]) =>
      keys.filter((key) => !existsSync(join(ROOT, "services", key, folder))).map((key) => `services/${key}/${folder}`),
    );
    expect({ unlisted: wrong, gone: stale }).toEqual({ unlisted: [], gone: [] });
  });
});

/** A setting the code reads, and the README that owns it (its service's or the gateway's; else the root README). */
interface Reading {
  name: string;
  owner: string;
}

/** Templates that build PF_ names: what each builds (the platform's settings families, or not a setting). */
const TEMPLATES: Record<string, string> = {
  "services/kit/editors/editors.ts": "PF_<KEY>_EDITORS, read for each module with an editor list (below)",
  "services/kit/events/jetstream-bus.ts": "JetStream stream names, not settings",
};
/** Settings read as a family (`loadConfig`'s service addresses, sources' credentials), named by their pattern. */
const FAMILIES: Record<string, (name: string) => boolean> = {
  "PF_<SERVICE>_URL": (name) => KEYS.includes(/^PF_([A-Z]+)_URL$/.exec(name)?.[1].toLowerCase() ?? ""),
  "PF_SOURCE_CRED_<NAME>": (name) => name.startsWith("PF_SOURCE_CRED_"),
};
const SETTING = /^PF_[A-Z0-9_]*[A-Z0-9]$/;

function sourceFiles(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".ts"))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)));
}

/** The README a setting is named in besides the environment table: its service's or the gateway's (the kit is none). */
function ownerOf(path: string): string {
  const [top, second] = path.split("/");
  if (top === "services") return second === "kit" ? "README.md" : `services/${second}/README.md`;
  return existsSync(join(ROOT, top, "README.md")) ? `${top}/README.md` : "README.md";
}

/** Every PF_ setting the code reads: names in code, settings the protos declare, and the editor lists' seeds. */
function readings(): { found: Reading[]; unclassified: string[] } {
  const found: Reading[] = [];
  const unclassified: string[] = [];
  for (const path of ["services", "gateway", "platform"].flatMap(sourceFiles)) {
    const source = ts.createSourceFile(path, read(path), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      if ((ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) && SETTING.test(node.text))
        found.push({ name: node.text, owner: ownerOf(path) });
      if (ts.isPropertyAccessExpression(node) && SETTING.test(node.name.text))
        found.push({ name: node.name.text, owner: ownerOf(path) });
      // A name built from parts (`PF_${key}_…`), not a message that starts with one.
      const built = ts.isTemplateExpression(node) && /^PF_[A-Z0-9_]*$/.test(node.head.text);
      if (built && !(path in TEMPLATES)) unclassified.push(`${path}: ${node.getText(source)}`);
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  for (const key of readdirSync(join(ROOT, "proto/pf"))) {
    const folder = join(ROOT, "proto/pf", key, "v1");
    if (!existsSync(folder)) continue;
    for (const file of readdirSync(folder)) {
      for (const [, name] of readFileSync(join(folder, file), "utf8").matchAll(/setting:\s*"(PF_[A-Z0-9_]+)"/g))
        found.push({ name, owner: `services/${key}/README.md` });
    }
  }
  for (const module of modules) {
    if (module.relations?.editor === editorRelation)
      found.push({ name: `PF_${module.key.toUpperCase()}_EDITORS`, owner: `services/${module.key}/README.md` });
  }
  return { found, unclassified };
}

/** The names in the first column of a Markdown file's tables (`PF_A`, `PF_B` in one cell count as two). */
function tabled(markdown: string): string[] {
  return [...markdown.matchAll(/^\| ([^|]*)\|/gm)].flatMap(([, cell]) =>
    [...cell.matchAll(/`(PF_[A-Z0-9_<>]*[A-Z0-9>])(?:=[^`]*)?`/g)].map((match) => match[1]),
  );
}

describe("settings", () => {
  const { found, unclassified } = readings();
  const environment = tabled(README.slice(README.indexOf("## Environment"), README.indexOf("## Layout")));

  it("are read only under names this test can see (a template building a PF_ name is classified above)", () => {
    expect(found.length).toBeGreaterThan(100);
    expect(unclassified).toEqual([]);
  });

  it("read anywhere are each in the README's environment table", () => {
    expect(sorted(found.map((reading) => reading.name).filter((name) => !environment.includes(name)))).toEqual([]);
  });

  it("read by a service, the kit or the gateway are each named in its README", () => {
    const missing = found
      .filter((reading) => reading.owner !== "README.md" && !read(reading.owner).includes(reading.name))
      .map((reading) => `${reading.owner}: ${reading.name}`);
    expect(sorted(missing)).toEqual([]);
  });

  it("listed in a settings table of the README or a service's are each read", () => {
    const names = new Set(found.map((reading) => reading.name));
    const readmes = [
      "README.md",
      "gateway/README.md",
      ...readdirSync(join(ROOT, "services")).map((key) => `services/${key}/README.md`),
    ];
    const unread = readmes
      .filter((path) => existsSync(join(ROOT, path)))
      .flatMap((path) => tabled(read(path)).map((name) => ({ path, name })))
      .filter(({ name }) => !names.has(name) && !(name in FAMILIES))
      .filter(({ name }) => !Object.values(FAMILIES).some((family) => family(name)))
      .map(({ path, name }) => `${path}: ${name}`);
    expect(sorted(unread)).toEqual([]);
    expect(Object.keys(FAMILIES).filter((family) => !environment.includes(family))).toEqual([]);
  });
});
