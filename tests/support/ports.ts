import { connect, createServer, type AddressInfo } from "node:net";

/** `count` distinct TCP ports on loopback that nothing listens on now (a restarted process can take the same). */
export async function freePorts(count: number): Promise<number[]> {
  const servers = Array.from({ length: count }, () => createServer());
  const ports = await Promise.all(
    servers.map(
      (server) =>
        new Promise<number>((done, fail) => {
          server.once("error", fail);
          server.listen(0, "127.0.0.1", () => done((server.address() as AddressInfo).port));
        }),
    ),
  );
  await Promise.all(servers.map((server) => new Promise((done) => server.close(done))));
  return ports;
}

/** Whether a server takes TCP connections at this URL's host and port now (a stopping server refuses them). */
export function accepts(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname.replace(/^\[|\]$/g, ""));
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}
