import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { Worker, type WorkerOptions } from "node:worker_threads";

/**
 * A worker thread running the module `name` beside `here` (the caller's import.meta.url). From a bundle (`npm start`,
 * `npm run build`) the build wrote `<name>.js` beside the caller's bundle; from source (tests, tsx) the worker loads
 * `<name>.ts` through tsx's ES module API (its CommonJS one cannot register hooks from a worker), so production never
 * needs a compiler. With `ready`, the worker posts "ready" once the module has loaded; either way messages posted
 * before then wait in its port.
 */
export function moduleWorker(here: string, name: string, options: WorkerOptions & { ready?: boolean } = {}): Worker {
  const { ready, ...workerOptions } = options;
  const then = ready ? `.then(() => require("node:worker_threads").parentPort.postMessage("ready"))` : "";
  // A module tsx imported (this worker's own, from source) has a query after its path.
  if (!new URL(here).pathname.endsWith(".ts")) {
    const entry = JSON.stringify(new URL(`./${name}.js`, here).href);
    return new Worker(`import(${entry})${then}`, { ...workerOptions, eval: true });
  }
  const tsx = JSON.stringify(
    new URL("dist/esm/api/index.mjs", pathToFileURL(createRequire(here).resolve("tsx/package.json"))).href,
  );
  const entry = JSON.stringify(new URL(`./${name}.ts`, here).href);
  const code = `import(${tsx}).then((api) => api.tsImport(${entry}, ${JSON.stringify(here)}))${then}`;
  return new Worker(code, { ...workerOptions, eval: true });
}
