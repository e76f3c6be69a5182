import { Writable } from "node:stream";
import { expect, it } from "vitest";
import { createLogger } from "../../services/kit/runtime/logger.js";
import { pairDevice, TestDevice } from "../support/device.js";
import { startTestPlatform, usePlatform } from "../support/platform.js";
import { until } from "../support/until.js";
import { openedSocket, type SocketPeer } from "../support/websocket.js";
import { botCall, managerToken, pairingCode, robotOf } from "./support.js";

/**
 * An instance of bot that stops with device links open: its links end, and their ends are recorded before its
 * database closes, so the devices show offline on every other instance at once (not after the presence timeout).
 */
const t = usePlatform({ services: ["bot"] });

async function onlineOf(robotId: string): Promise<boolean[]> {
  const answer = await botCall(t, await managerToken(t))("GET", `/robots/${robotId}/devices?limit=200`);
  return (answer.body.devices.devices as { online: boolean }[]).map((device) => device.online);
}

it("records the end of every link it held as it stops: its devices are offline at once, nothing logged as lost", async () => {
  const warnings: string[] = [];
  const stopping = await startTestPlatform({
    services: ["bot"],
    env: {
      DATABASE_URL: t.platform.databaseUrl,
      ...(t.events ? { PF_NATS_NAMESPACE: t.events.namespace } : {}),
    },
    logger: createLogger(
      "warn",
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          warnings.push(chunk.toString());
          done();
        },
      }),
    ),
  });
  const robot = await robotOf(t);
  // Links over the stopping instance's gateway (real WebSockets, closed first as it stops) and over its RPC handlers.
  const sockets: SocketPeer[] = [];
  const devices: TestDevice[] = [];
  for (let i = 0; i < 4; i++) {
    const paired = await pairDevice(t, i === 0 ? robot.code : await pairingCode(t, robot.id));
    if (i % 2 === 0) {
      const socket = await openedSocket(`${stopping.gatewayUrl}/bot/api/v1/devices/link`, {
        "x-pf-device-credential": paired.credential,
      });
      socket.send({ hello: { agent_version: "stop-test/1", classes: ["function"], caps: { slots: 1 } } });
      sockets.push(socket);
    } else devices.push(await TestDevice.connect(stopping, paired.credential));
  }
  await until(async () => (await onlineOf(robot.id)).filter(Boolean).length === 4);

  await stopping.stop();
  expect(await onlineOf(robot.id)).toEqual([false, false, false, false]);
  expect(warnings.join("")).not.toContain("not recorded");
  for (const device of devices) expect(await device.ended).toBeUndefined();
  for (const socket of sockets) expect((await socket.close()).code).toBe(1001);
});
