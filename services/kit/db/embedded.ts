import { PGlite } from "@electric-sql/pglite";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";
import { mkdir } from "node:fs/promises";
import { createServer } from "node:net";

/** The embedded PostgreSQL: PGlite behind a local socket, so the usual pg driver talks to it. */
export interface EmbeddedPostgres {
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts PGlite on `dataDir` (in memory when undefined) and serves it on a free
 * local port. PGlite is one session: the socket server holds other connections'
 * queries while one is inside a transaction, so callers must keep transactions short.
 */
export async function startEmbeddedPostgres(
  dataDir: string | undefined,
  maxConnections: number,
): Promise<EmbeddedPostgres> {
  if (dataDir) await mkdir(dataDir, { recursive: true });
  const db = await PGlite.create(dataDir ? { dataDir } : {});
  const port = await freePort();
  const server = new PGLiteSocketServer({ db, port, host: "127.0.0.1", maxConnections });
  await server.start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async stop() {
      await server.stop();
      await db.close();
    },
  };
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
