import { createServer, connect, type Server, type Socket } from "node:net";

/**
 * A TCP proxy a test can cut and restore, to make a real server unreachable
 * for a while, or let a request through and reset before its answer.
 */
export class TcpProxy {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  port = 0;
  /** While set, the client's bytes still reach the server, but what the server sends back is dropped. */
  holdAnswers = false;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  async open(): Promise<void> {
    this.server = createServer((client) => {
      const upstream = connect(this.targetPort, this.targetHost);
      for (const [socket, other] of [
        [client, upstream],
        [upstream, client],
      ]) {
        this.sockets.add(socket);
        // One side gone (closed, reset, failed) takes the other with it, as a proxy's connection does: a client that
        // gives up mid-handshake must not leave the server's side open.
        socket.on("close", () => {
          this.sockets.delete(socket);
          other.destroy();
        });
        socket.on("error", () => socket.destroy());
      }
      client.pipe(upstream);
      upstream.on("data", (chunk: Buffer) => {
        if (!this.holdAnswers && !client.destroyed) client.write(chunk);
      });
      upstream.on("end", () => client.end());
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, "127.0.0.1", resolve));
    const address = this.server.address();
    if (typeof address === "object" && address) this.port = address.port;
  }

  /** Resets every open connection (TCP RST, as a middlebox would); new ones are still accepted. */
  reset(): void {
    for (const socket of this.sockets) socket.resetAndDestroy();
  }

  /** Drops every connection and stops listening. */
  async cut(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
