import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
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
 * Loads the built-in catalogue: assembles each function artifact from its WAT text (lib.wat's shared fields, then
 * its own) with wabt, and reads each code script; `code` only when the host can run that class.
 */
export async function loadCatalogue(classes: readonly JobClass[]): Promise<Catalogue> {
  const { default: loadWabt } = await import("wabt");
  const wabt = await loadWabt();
  const lib = await readFile(here("function/lib.wat"), "utf8");
  const artifacts = new Map<string, Artifact>();
  for (const { name, schema } of BUILT_IN) {
    const check = schemaCheck(schema);
    if (classes.includes("function")) {
      const text = `(module\n${lib}\n${await readFile(here(`function/${name}.wat`), "utf8")})`;
      const parsed = wabt.parseWat(`${name}.wat`, text);
      try {
        parsed.validate();
        const { buffer } = parsed.toBinary({});
        artifacts.set(artifactKey("function", name), {
          name,
          class: "function",
          sha256: sha256(buffer),
          check,
          module: await WebAssembly.compile(buffer),
          memory: declaredMemory(buffer),
        });
      } finally {
        parsed.destroy();
      }
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
