import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import { ToolFailure } from "../../families/tool.js";

/** A document's faults against a caller's schema, or why the schema does not compile. */
export type Verdict =
  | { valid: boolean; errors: { pointer: string; keyword: string; message: string; schema_path: string }[] }
  | { fault: string };

/** Each worker's V8 heap at most: a schema or document that swells ends its worker, not the process. */
const WORKER_HEAP_MB = 64;

/**
 * The worker: ajv (draft-07, 2019-09 and 2020-12 by the schema's `$schema`, the formats of ajv-formats) on its own
 * instances, never the kit's. No `loadSchema`, so a `$ref` outside the schema fails to compile rather than being
 * fetched; `removeSchema()` after each job keeps no caller's schema (nor its `$id`) for the next. Plain JavaScript
 * loading the packages by resolved path, so it runs the same from source and from the bundle.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const { paths, maxErrors } = workerData;
const addFormats = require(paths.formats).default;
const engine = (path) => {
  const ajv = new (require(path).default)({ allErrors: true, strict: false, logger: false });
  addFormats(ajv);
  return ajv;
};
const engines = { "draft-07": engine(paths.draft07), "2019-09": engine(paths.draft2019), "2020-12": engine(paths.draft2020) };
const draftOf = (schema) => {
  const named = typeof schema === "object" && schema !== null ? schema.$schema : undefined;
  if (named === undefined) return "2020-12";
  return Object.keys(engines).find((draft) => typeof named === "string" && named.includes(draft));
};
parentPort.on("message", ({ schema, document }) => {
  const draft = draftOf(schema);
  if (draft === undefined) return parentPort.postMessage({ fault: "its $schema is none of draft-07, 2019-09 and 2020-12" });
  const ajv = engines[draft];
  try {
    const validate = ajv.compile(schema);
    const valid = validate(document) === true;
    const errors = (validate.errors || []).slice(0, maxErrors).map((error) => ({
      pointer: error.instancePath,
      keyword: error.keyword,
      message: error.message || "is not valid",
      schema_path: error.schemaPath,
    }));
    parentPort.postMessage({ valid, errors });
  } catch (error) {
    parentPort.postMessage({ fault: String((error && error.message) || error) });
  } finally {
    ajv.removeSchema();
  }
});
`;

/**
 * Runs callers' JSON Schemas off the event loop. A schema can make validation take time exponential in its size
 * (nested `anyOf` over `$ref`s: a 3 KB schema runs for minutes) and `pattern` can backtrack without end, so no
 * size bound makes it safe: a job runs in a worker thread that is terminated when the run's signal aborts (its
 * time budget, or the caller gone), and a new worker takes its place for the next job. At most `size` jobs run at
 * once; the rest wait their turn, still within their own budget.
 */
export class SchemaSandbox {
  private readonly idle: Worker[] = [];
  private running = 0;
  private readonly turns: (() => void)[] = [];

  constructor(
    private readonly size: number,
    private readonly maxErrors: number,
  ) {}

  async validate(schema: unknown, document: unknown, signal: AbortSignal): Promise<Verdict> {
    await this.turn(signal);
    let worker: Worker | undefined;
    try {
      worker = this.idle.pop() ?? this.spawn();
      const verdict = await ask(worker, { schema, document }, signal);
      worker.unref();
      this.idle.push(worker);
      worker = undefined;
      return verdict;
    } finally {
      if (worker) void worker.terminate();
      this.running--;
      this.turns.shift()?.();
    }
  }

  /** Waits until fewer than `size` jobs run, or the signal aborts. */
  private async turn(signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    if (this.running < this.size) {
      this.running++;
      return;
    }
    await new Promise<void>((resolve, reject) => {
      const go = () => {
        signal.removeEventListener("abort", gone);
        this.running++;
        resolve();
      };
      const gone = () => {
        this.turns.splice(this.turns.indexOf(go), 1);
        reject(signal.reason as Error);
      };
      this.turns.push(go);
      signal.addEventListener("abort", gone, { once: true });
    });
  }

  private spawn(): Worker {
    const require = createRequire(import.meta.url);
    const paths = {
      formats: require.resolve("ajv-formats"),
      draft07: require.resolve("ajv"),
      draft2019: require.resolve("ajv/dist/2019"),
      draft2020: require.resolve("ajv/dist/2020"),
    };
    return new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { paths, maxErrors: this.maxErrors },
      resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
    });
  }
}

/** One job on a worker: its answer, the signal's reason when it aborts first, a ToolFailure when it runs out of memory. */
function ask(worker: Worker, job: { schema: unknown; document: unknown }, signal: AbortSignal): Promise<Verdict> {
  worker.ref();
  return new Promise<Verdict>((resolve, reject) => {
    const settle = () => {
      signal.removeEventListener("abort", aborted);
      worker.off("message", answered);
      worker.off("error", failed);
      worker.off("exit", exited);
    };
    const answered = (verdict: Verdict) => {
      settle();
      resolve(verdict);
    };
    const failed = (error?: Error) => {
      settle();
      // Out of its heap is the job's doing; any other end of the worker is a fault of the sandbox itself.
      if ((error as NodeJS.ErrnoException | undefined)?.code === "ERR_WORKER_OUT_OF_MEMORY")
        reject(new ToolFailure("tools.run.failed", "The validation used more memory than a run may."));
      else reject(error ?? new Error("the JSON Schema worker exited"));
    };
    const exited = () => failed();
    const aborted = () => {
      settle();
      reject(signal.reason as Error);
    };
    worker.on("message", answered);
    worker.on("error", failed);
    worker.on("exit", exited);
    signal.addEventListener("abort", aborted, { once: true });
    worker.postMessage(job);
  });
}
