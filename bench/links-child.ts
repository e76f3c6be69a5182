/**
 * The load process of `device links`: opens one device link per credential (JSON lines on stdin, then the end of
 * stdin), each with the `X-PF-Device-Credential` header, waits for bot's `welcome` and says `hello`, as a device
 * does; prints `{"open": n, "failed": n}` once every one is settled, then holds them until SIGTERM.
 */
import { createInterface } from "node:readline";
import WebSocket from "ws";

const url = process.argv[2]!;
const credentials: string[] = [];
for await (const line of createInterface({ input: process.stdin })) if (line) credentials.push(JSON.parse(line));

const sockets: WebSocket[] = [];
let failed = 0;
// A few at a time, as devices coming online do; each settles at its welcome or its failure.
const queue = [...credentials];
await Promise.all(
  Array.from({ length: 16 }, async () => {
    for (let credential = queue.shift(); credential; credential = queue.shift()) {
      const socket = new WebSocket(url, { headers: { "x-pf-device-credential": credential } });
      const welcomed = await new Promise<boolean>((resolve) => {
        socket.once("message", () => resolve(true));
        socket.once("error", () => resolve(false));
        socket.once("close", () => resolve(false));
      });
      if (!welcomed) {
        failed++;
        continue;
      }
      socket.send(JSON.stringify({ hello: { classes: ["bench-idle"], agent_version: "bench" } }));
      sockets.push(socket);
    }
  }),
);
process.stdout.write(
  `${JSON.stringify({ open: sockets.filter((s) => s.readyState === WebSocket.OPEN).length, failed })}\n`,
);
process.once("SIGTERM", () => {
  for (const socket of sockets) socket.terminate();
  process.exit(0);
});
