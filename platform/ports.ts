import { createServer } from "node:net";

/** A port the process listens on, and the setting that chooses it. */
export interface ListenPort {
  setting: string;
  port: number;
  host: string;
}

/**
 * Binds each port once and lets it go, before the slow parts of a start (the
 * database, the migrations): a port another process holds stops the start at
 * once, naming its setting. A port 0 is always free.
 */
export async function portsFree(ports: readonly ListenPort[]): Promise<void> {
  for (const port of ports) if (port.port !== 0) await bindable(port);
}

/** The error a failed listen becomes: one line naming the setting and what to do. */
export function portRefused({ setting, port, host }: ListenPort, error: unknown): Error {
  const code = (error as { code?: string }).code;
  const why =
    code === "EADDRINUSE"
      ? "is taken by another process: stop it, or set"
      : code === "EACCES"
        ? "needs privileges this process does not have: set"
        : `cannot be listened on (${code ?? String(error)}): set`;
  return new Error(`${setting}: port ${port} on ${host} ${why} ${setting} to a free port`, { cause: error });
}

function bindable(wanted: ListenPort): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", (error) => reject(portRefused(wanted, error)));
    probe.listen({ port: wanted.port, host: wanted.host, exclusive: true }, () => probe.close(() => resolve()));
  });
}
