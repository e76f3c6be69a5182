import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { modules } from "../../platform/registry.js";
import { SEARCH_DOCUMENT_WRITE } from "../../services/kit/search-documents/search-documents.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

/**
 * The services each service calls, from its code: every `client(X)` whose X is
 * imported from another service's generated code (`gen/pf/<key>/…`), and search
 * for a service whose token holds `search.document.write` (the kit's search relay
 * writes its documents there).
 */
function callsInCode(): Map<string, Set<string>> {
  const calls = new Map<string, Set<string>>();
  for (const { key, holds } of modules) {
    const callees = new Set<string>();
    for (const file of sources(join(ROOT, "services", key))) {
      const text = readFileSync(file, "utf8");
      for (const [, name] of text.matchAll(/\bclient\((\w+)\)/g)) {
        const imported = new RegExp(`import \\{[^}]*\\b${name}\\b[^}]*\\} from "[./]*gen/pf/(\\w+)/`).exec(text);
        if (imported) callees.add(imported[1]);
      }
    }
    if (holds?.includes(SEARCH_DOCUMENT_WRITE)) callees.add("search");
    callees.delete(key);
    calls.set(key, callees);
  }
  return calls;
}

/** docs/operations.md's table of calls: `| caller | callee (what), callee (what) |`; `others` calls nothing. */
function callsInDocs(): { rows: Map<string, Set<string>>; others: boolean } {
  const doc = readFileSync(join(ROOT, "docs/operations.md"), "utf8");
  const table = doc.slice(doc.indexOf("| caller"), doc.indexOf("\n\n", doc.indexOf("| caller")));
  const rows = new Map<string, Set<string>>();
  let others = false;
  for (const line of table.split("\n").slice(2)) {
    const [caller, called] = line
      .split("|")
      .slice(1, 3)
      .map((cell) => cell.trim());
    if (caller === "others") {
      others = called === "nothing";
      continue;
    }
    const withoutWhat = called.replace(/\([^)]*\)/g, "");
    const callees = withoutWhat.startsWith("nothing") ? [] : withoutWhat.split(",").map((c) => c.trim());
    rows.set(caller, new Set(callees));
  }
  return { rows, others };
}

describe("docs/operations.md's calls between services", () => {
  it("are the calls the code makes", () => {
    const code = callsInCode();
    const { rows, others } = callsInDocs();
    const asListed = (caller: string) => [...(rows.get(caller) ?? (others ? [] : ["(not listed)"]))].sort();
    for (const [caller, callees] of code) expect(asListed(caller), caller).toEqual([...callees].sort());
    for (const caller of rows.keys()) expect(code.has(caller), `${caller} is no service`).toBe(true);
  });

  it("finds calls where the code has them (the derivation can fail)", () => {
    const code = callsInCode();
    expect([...code.get("tips")!]).toContain("billing");
    expect([...code.get("vip")!]).toContain("tips");
  });
});
