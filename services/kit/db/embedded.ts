import { PGlite } from "@electric-sql/pglite";
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm";
import { unaccent } from "@electric-sql/pglite/contrib/unaccent";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";
import { existsSync } from "node:fs";
import { cp, mkdir, readFile, rename, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { SessionQueue } from "./embedded-session.js";

/** The embedded PostgreSQL: PGlite behind a local socket, so the usual pg driver talks to it. */
export interface EmbeddedPostgres {
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts PGlite on `dataDir` (in memory when undefined) and serves it on a free
 * local port. PGlite is one session: the socket server holds other connections'
 * queries while one's query or transaction is unfinished, so callers must keep transactions short.
 */
export async function startEmbeddedPostgres(
  dataDir: string | undefined,
  maxConnections: number,
): Promise<EmbeddedPostgres> {
  const template = await templatePath();
  const fresh = dataDir !== undefined && !existsSync(join(dataDir, "PG_VERSION"));
  if (dataDir && fresh && existsSync(template)) await cp(template, dataDir, { recursive: true });
  else if (dataDir) await mkdir(dataDir, { recursive: true });
  setFlagsFromString(`--wasm-tiering-budget=${WASM_TIERING_BUDGET}`);
  const db = await PGlite.create({ dataDir, postgresqlconf: SETTINGS, extensions: EXTENSIONS });
  if (dataDir && fresh && !existsSync(template)) await saveTemplate(db, dataDir, template);
  const port = await freePort();
  const server = new PGLiteSocketServer({ db, port, host: "127.0.0.1", maxConnections });
  // Its own queue can split one connection's query with another's (embedded-session.ts): ours keeps each whole.
  Object.assign(server, { queryQueue: new SessionQueue(db) });
  await server.start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}

/**
 * PostgreSQL's memory settings sized for one local session: its defaults
 * (128 MB of shared buffers, 64 MB for maintenance) are taken from the WASM
 * heap, which never shrinks. PGlite writes them into postgresql.conf at every start.
 */
const SETTINGS = ["shared_buffers = 16MB", "maintenance_work_mem = 16MB"];

/**
 * The contrib extensions PGlite ships that services create in their schemas
 * (`create extension if not exists`): search's title suggestions (pg_trgm) and
 * accent folding (unaccent). Loaded at start so the embedded database has them.
 */
const EXTENSIONS = { pg_trgm, unaccent };

/**
 * How much of a WASM function runs before V8 recompiles it optimised (V8's default: 1,800,000). At the
 * default, PGlite's start alone sends many functions to the optimising compiler, whose threads stall the
 * start on two busy cores; ten times it leaves that to the database's use, where it pays off.
 */
const WASM_TIERING_BUDGET = 18_000_000;

/**
 * A new data folder starts as a copy of the one initdb made the first time (per
 * PGlite version: initdb in WASM takes seconds, a copy a fraction of one), kept
 * in node_modules/.cache beside PGlite itself. It holds nothing of ours: it is
 * copied before any schema is made. A plain copy of the files, not PGlite's
 * tarball: unpacking that leaves the process tens of MB larger for good.
 */
async function templatePath(): Promise<string> {
  const pglite = dirname(dirname(createRequire(import.meta.url).resolve("@electric-sql/pglite")));
  const { version } = JSON.parse(await readFile(join(pglite, "package.json"), "utf8")) as { version: string };
  return join(pglite, "..", "..", ".cache", "pf-platform", `pglite-${version}-initdb`);
}

/** Copies the fresh cluster as the template; a cache that cannot be written (read-only node_modules) is no error. */
async function saveTemplate(db: PGlite, dataDir: string, template: string): Promise<void> {
  const partial = `${template}.${process.pid}`;
  try {
    // Everything on disk, and nothing else runs on the new cluster while it is copied.
    await db.exec("checkpoint");
    await cp(dataDir, partial, { recursive: true });
    // Copied aside and renamed: a process starting meanwhile never copies half a template.
    await rename(partial, template);
  } catch {
    await rm(partial, { recursive: true, force: true });
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}
