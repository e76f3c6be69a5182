import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "../runtime/logger.js";

/** PostgreSQL's too_many_connections: "sorry, too many clients already" (or a role's or database's limit). */
export const TOO_MANY_CLIENTS = "53300";
/** How long a start waits for the server to have a connection to spare, before it gives up with the refusal. */
export const START_WAIT_MS = 30_000;
/** The first wait after a refusal; each next one doubles, up to MAX_WAIT_MS. */
const FIRST_WAIT_MS = 100;
const MAX_WAIT_MS = 2_000;

export function isTooManyClients(error: unknown): boolean {
  return (error as { code?: unknown } | undefined)?.code === TOO_MANY_CLIENTS;
}

/**
 * Runs `connect` again while the server refuses the connection for want of one to spare (53300), waiting 100 ms,
 * 200 ms … up to 2 s between tries, with one log line per wait, for `boundMs` at most: past it the refusal is
 * thrown as it came (a call answers 503), or, `atStart`, as an error naming the setting that ends the start.
 * Other connections of this and other processes come and go meanwhile, so it usually passes.
 */
export async function waitingOutTooMany<T>(
  connect: () => Promise<T>,
  options: { boundMs: number; what: string; logger?: Logger; atStart?: boolean },
): Promise<T> {
  const giveUpAt = Date.now() + options.boundMs;
  for (let waitMs = FIRST_WAIT_MS; ; waitMs = Math.min(2 * waitMs, MAX_WAIT_MS)) {
    try {
      return await connect();
    } catch (error) {
      const left = giveUpAt - Date.now();
      if (!isTooManyClients(error)) throw error;
      if (left <= 0 && options.atStart)
        throw new Error(
          `PF_DB_POOL: the database had no connection to spare for ${options.boundMs / 1000} s (53300 too many clients) ` +
            `while ${options.what} waited: its other clients hold them all (docs/operations.md, "Connections")`,
          { cause: error },
        );
      if (left <= 0) throw error;
      const wait = Math.min(waitMs, left);
      options.logger?.warn(
        { code: TOO_MANY_CLIENTS, waitMs: wait },
        `the database has no connection to spare (53300 too many clients): ${options.what} waits ${wait} ms and asks again (docs/operations.md, "Connections")`,
      );
      await sleep(wait);
    }
  }
}
