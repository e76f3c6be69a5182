import type { ConnectRouter, ConnectRouterOptions } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { frontDoor, type FrontDoorOptions } from "./front-door.js";

const CLOSE_GRACE_MS = 2_000;

/** The RPC port, as the host stops it: first no new calls, then (once the calls being served are done) the connections. */
export interface RpcServer {
  url: string;
  /** Refuses new connections and streams (GOAWAY); calls being served go on and answer. */
  stopAccepting(): Promise<void>;
  /** Closes what is left, after a short grace for answers still being written. */
  close(): Promise<void>;
}

/**
 * How every port that serves the RPCs reads their messages (this RPC port, and
 * the gateway's Connect routes): at most `readMaxBytes` a message after
 * decompression, and JSON naming an unknown field refused, never ignored.
 */
export function handlerOptions(readMaxBytes: number): ConnectRouterOptions {
  return { readMaxBytes, jsonOptions: { ignoreUnknownFields: false } };
}

/**
 * The RPC port: gRPC, gRPC-Web and Connect on HTTP/2 cleartext. Every call
 * passes the front door first (the peer's address, admission before the body
 * is read, a bounded time to send it); a message larger than `readMaxBytes`
 * (after decompression) is refused before any handler runs.
 */
export async function serveRpc(
  routes: (router: ConnectRouter) => void,
  options: { port: number; host: string; readMaxBytes: number } & FrontDoorOptions,
): Promise<RpcServer> {
  const { port, host } = options;
  const connect = connectNodeAdapter({ routes, ...handlerOptions(options.readMaxBytes) });
  const server = http2.createServer(frontDoor(connect, options));
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  // Open sessions (clients' pooled connections, health watches) would hold server.close() forever.
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${(server.address() as AddressInfo).port}`,
    async stopAccepting() {
      server.close();
      for (const session of sessions) session.close();
    },
    async close() {
      // Answers just returned may still be on their way out: give the closing sessions a moment.
      const closing = [...sessions].map((session) => new Promise((resolve) => session.once("close", resolve)));
      await Promise.race([Promise.all(closing), new Promise((resolve) => setTimeout(resolve, CLOSE_GRACE_MS).unref())]);
      for (const session of sessions) session.destroy();
    },
  };
}
