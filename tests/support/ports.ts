import { createServer, type AddressInfo } from "node:net";

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
