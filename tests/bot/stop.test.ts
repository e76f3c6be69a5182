import { Code } from "@connectrpc/connect";
import { Writable } from "node:stream";
import { expect, it } from "vitest";
import { createLogger } from "../../services/kit/runtime/logger.js";
import { pairDevice, TestDevice } from "../support/device.js";
import { startTestPlatform, usePlatform, type TestPlatform } from "../support/platform.js";
import { holdRows } from "../support/row-lock.js";
import { DATABASE_SERVER, itWith } from "../support/skips.js";
import { until } from "../support/until.js";
import { openedSocket, type SocketPeer } from "../support/websocket.js";
import { botCall, controlChannel, managerToken, pairingCode, robotOf } from "./support.js";

/**
 * An instance of bot that stops with device links open: its links end, and their ends are recorded before its
 * database closes, so the devices show offline on every other instance at once (not after the presence timeout).
 */
const t = usePlatform({ services: ["bot"] });

/** A second instance of bot on the same database and bus, and the warnings it logs. */
async function secondInstance(
  env: Record<string, string> = {},
): Promise<{ stopping: TestPlatform; warnings: string[] }> {
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
  return { stopping, warnings };
}

async function onlineOf(robotId: string): Promise<boolean[]> {
  const answer = await botCall(t, await managerToken(t))("GET", `/robots/${robotId}/devices?limit=200`);
  return (answer.body.devices.devices as { online: boolean }[]).map((device) => device.online);
}

it("records the end of every link it held as it stops: its devices are offline at once, nothing logged as lost", async () => {
  const { stopping, warnings } = await secondInstance();
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

// The device's row is held from another session: the server's, as the embedded database serves one at a time.
itWith(DATABASE_SERVER, "records the end of a link that was still opening as it stopped", async () => {
  const { stopping } = await secondInstance();
  const robot = await robotOf(t);
  const paired = await pairDevice(t, robot.code);
  const channel = await controlChannel(stopping, await managerToken(stopping), { "x-pf-subject": robot.owner });
  channel.send(undefined, { robotId: robot.id });
  await channel.next("estop");
  const held = await holdRows(t.platform.databaseUrl, "select 1 from bot.devices where id = $1 for update", [
    paired.deviceId,
  ]);
  const linking = TestDevice.connect(stopping, paired.credential, null).catch((error: unknown) => error);
  await held.queued();
  const stopped = stopping.stop();
  // The operator channel fails as the instance's links stop: the stop now waits for the link's open to be recorded.
  expect(await channel.ended).toMatchObject({ code: Code.Unavailable });
  await held.release();
  await stopped;
  expect(await onlineOf(robot.id)).toEqual([false]);
  await linking;
});
