import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { outboundSettings, type OutboundSettings } from "../../services/kit/outbound/fetch.js";
import type { Config } from "../../services/kit/runtime/config.js";

/** An HTTP server on 127.0.0.1 standing in for an outside site; it counts the connections it took. */
export interface Fixture {
  port: number;
  /** `127.0.0.1:<port>`, as allowHosts lists it. */
  host: string;
  url(path: string): string;
  connections: number;
  /** The requests it received, headers as sent. */
  requests: IncomingMessage[];
  close(): Promise<void>;
}

export async function fixtureServer(
  handle: (request: IncomingMessage, response: ServerResponse) => void,
): Promise<Fixture> {
  const server = createServer((request, response) => {
    fixture.requests.push(request);
    handle(request, response);
  });
  server.on("connection", () => fixture.connections++);
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const port = (server.address() as AddressInfo).port;
  const fixture: Fixture = {
    port,
    host: `127.0.0.1:${port}`,
    url: (path) => `http://127.0.0.1:${port}${path}`,
    connections: 0,
    requests: [],
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
  return fixture;
}

/** The outbound settings of a test: defaults, fixtures' hosts allowed, short timeouts, optionally a fake resolver. */
export function testSettings(allowHosts: string[], overrides: Partial<OutboundSettings> = {}): OutboundSettings {
  return {
    ...outboundSettings({ env: {} } as Config),
    allowHosts,
    connectTimeoutMs: 2_000,
    totalTimeoutMs: 5_000,
    maxBytes: 1024 * 1024,
    ...overrides,
  };
}

/**
 * Counts the plain TCP client sockets this process opens while `work` runs
 * (Node's `net.client.socket` channel), and keeps every one past the first
 * `allowed` from connecting at all: should the guard ever let a refused
 * address through, the test fails without sending anything there. (TLS
 * sockets do not pass this channel: tests aim refused addresses over http.)
 */
export async function socketsOpenedBy(work: () => Promise<unknown>, allowed = 0): Promise<number> {
  let opened = 0;
  const fence = (message: unknown) => {
    if (++opened <= allowed) return;
    // net.connect calls this socket's connect right after the channel: it never reaches the network.
    const socket = (message as { socket: Socket }).socket;
    socket.connect = () => {
      setImmediate(() => socket.destroy(new Error("fenced by the test: not connected")));
      return socket;
    };
  };
  subscribe("net.client.socket", fence);
  try {
    await work();
  } finally {
    unsubscribe("net.client.socket", fence);
  }
  return opened;
}
