import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { schemaCheck, type DocumentCheck } from "../../services/kit/documents/json-schema.js";
import { declaredMemory, type DeclaredMemory } from "../sandbox/wasm-memory.js";

/** The job classes an agent runs: a WebAssembly/WASI module, or a process. */
export type JobClass = "function" | "code";

/** A pre-registered artifact: what it runs, what input it declares and the digest advertised in `hello`. */
export interface Artifact {
  name: string;
  class: JobClass;
  /** sha256 of its bytes (the assembled module, or the script), lowercase hex. */
  sha256: string;
  /** Checks a job's args against the artifact's declared input. */
  check: DocumentCheck;
  /** `function`: the compiled module and the memory it declares. */
  module?: WebAssembly.Module;
  memory?: DeclaredMemory;
  /** `code`: the script's path, run by /bin/sh. */
  script?: string;
}

/** The artifacts an agent holds, by class then name. */
export type Catalogue = ReadonlyMap<string, Artifact>;

export const artifactKey = (jobClass: string, name: string) => `${jobClass}/${name}`;

const integer = (minimum: number, maximum: number) => ({ type: "integer", minimum, maximum });
const input = (properties: Record<string, object>, required: string[]) => ({
  type: "object",
  properties,
  required,
  additionalProperties: false,
});

/**
 * The built-in catalogue (for tests and `npm start`): each artifact in both classes, with one declared input.
 * The modules and scripts read their args from stdin as canonical JSON; the schemas keep numbers the only digits
 * in it and small enough to print as plain integers, which is all the modules' parsing relies on.
 */
const BUILT_IN: { name: string; schema: object }[] = [
  { name: "echo", schema: input({ text: { type: "string", maxLength: 65_536 } }, ["text"]) },
  {
    name: "sum",
    schema: input({ numbers: { type: "array", maxItems: 1000, items: integer(-1e12, 1e12) } }, ["numbers"]),
  },
  { name: "sleep", schema: input({ ms: integer(0, 86_400_000) }, ["ms"]) },
  // The module declares a 256 MiB maximum and starts with one page: 255 MiB is what it can grow by.
  { name: "hog", schema: input({ mib: integer(1, 255) }, ["mib"]) },
  { name: "printer", schema: input({ lines: integer(0, 1_000_000), pause_ms: integer(0, 60_000) }, ["lines"]) },
];

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

/**
 * Loads the built-in catalogue: each function artifact's module (`functionModules`), and each code script; `code`
 * only when the host can run that class.
 */
export async function loadCatalogue(classes: readonly JobClass[]): Promise<Catalogue> {
  const modules = classes.includes("function") ? await functionModules() : undefined;
  const artifacts = new Map<string, Artifact>();
  for (const { name, schema } of BUILT_IN) {
    const check = schemaCheck(schema);
    const buffer = modules?.get(name);
    if (buffer) {
      artifacts.set(artifactKey("function", name), {
        name,
        class: "function",
        sha256: sha256(buffer),
        check,
        module: await WebAssembly.compile(buffer),
        memory: declaredMemory(buffer),
      });
    }
    if (classes.includes("code")) {
      const script = here(`code/${name}.sh`);
      artifacts.set(artifactKey("code", name), {
        name,
        class: "code",
        sha256: sha256(await readFile(script)),
        check,
        script,
      });
    }
  }
  return artifacts;
}

/**
 * Each function artifact's module by name: beside a bundle those its build assembled (`function/<name>.wasm`,
 * deploy/build.ts), so a bundled agent never loads wabt (whose heap it would hold long after, ~20 MB); from source
 * assembled here.
 */
async function functionModules(): Promise<Map<string, Uint8Array>> {
  const built = await Promise.all(
    BUILT_IN.map(({ name }) => readFile(here(`function/${name}.wasm`)).catch(() => undefined)),
  );
  if (built.some((bytes) => bytes === undefined)) return assembleFunctions(here("function"));
  return new Map(BUILT_IN.map(({ name }, i) => [name, built[i]!]));
}

/**
 * Assembles each function artifact from its WAT text in `folder` (lib.wat's shared fields, then its own) with wabt:
 * the bytes the agent hashes and runs.
 */
export async function assembleFunctions(folder: string): Promise<Map<string, Uint8Array>> {
  const { default: loadWabt } = await import("wabt");
  const wabt = await loadWabt();
  const lib = await readFile(join(folder, "lib.wat"), "utf8");
  const modules = new Map<string, Uint8Array>();
  for (const { name } of BUILT_IN) {
    const parsed = wabt.parseWat(
      `${name}.wat`,
      `(module\n${lib}\n${await readFile(join(folder, `${name}.wat`), "utf8")})`,
    );
    try {
      parsed.validate();
      modules.set(name, parsed.toBinary({}).buffer);
    } finally {
      parsed.destroy();
    }
  }
  return modules;
}
