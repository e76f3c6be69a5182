import { generateKeyPairSync } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPlatform, usePlatform, type TestPlatform } from "../support/platform.js";
import { until } from "../support/until.js";
import { openedSocket, openSocket, refusedSocket, SocketPeer } from "../support/websocket.js";
import { botCall, managerToken, robotOf } from "../bot/support.js";

/**
 * bot's device link (BotLinkService.Link, the real handlers) as a WebSocket on the gateway, over real HTTP with
 * `ws`: a device pairs over HTTP and links with its credential, in one process and with bot in another.
 */
const LINK = "/bot/api/v1/devices/link";

/** A robot with a device paired over the gateway: the robot's id and the device's id and credential. */
async function pairedOver(t: TestPlatform) {
  const robot = await robotOf(t);
  const paired = await t.http("POST", "/bot/api/v1/devices/pair", { body: { code: robot.code, name: "arm" } });
  expect(paired.status).toBe(201);
  return { robotId: robot.id, deviceId: paired.body.device_id as string, credential: paired.body.credential as string };
}

/** Links a device over a real WebSocket and says hello. */
async function linked(t: TestPlatform, credential: string): Promise<SocketPeer> {
  const link = await openedSocket(t.gatewayUrl + LINK, { "x-pf-device-credential": credential });
  expect(await link.next()).toMatchObject({ welcome: { estop: false } });
  link.send({
    hello: { agent_version: "ws-test/1", classes: ["function"], caps: { slots: 1, net: ["NET_POLICY_NONE"] } },
  });
  return link;
}

/** Whether bot shows the device online, and what it advertises. */
async function presence(t: TestPlatform, robotId: string, deviceId: string) {
  const answer = await botCall(t, await managerToken(t))("GET", `/robots/${robotId}/devices?limit=200`);
  const devices = (answer.body.devices?.devices ?? []) as { id: string; online: boolean; agent_version: string }[];
  return devices.find((each) => each.id === deviceId);
}

function behaviour(platform: () => TestPlatform) {
  it("refuses a device without a good credential before the upgrade, as a problem", async () => {
    const t = platform();
    for (const headers of [{}, { "x-pf-device-credential": "dcr_unknown" }] as Record<string, string>[]) {
      const answer = await refusedSocket(t.gatewayUrl + LINK, headers);
      expect(answer.status).toBe(401);
      expect(answer.headers["content-type"]).toMatch(/^application\/problem\+json/);
      expect(answer.body).toMatchObject({ status: 401, code: "bot.device.credential_invalid" });
    }
  });

  it("links a paired device: welcome first, its hello recorded, the e-stop sent, revoke closing it for good", async () => {
    const t = platform();
    const { robotId, deviceId, credential } = await pairedOver(t);
    const link = await linked(t, credential);
    await until(async () => (await presence(t, robotId, deviceId))?.agent_version === "ws-test/1");
    expect(await presence(t, robotId, deviceId)).toMatchObject({ online: true });

    const manager = botCall(t, await managerToken(t));
    expect((await manager("POST", `/robots/${robotId}/estop`)).status).toBe(200);
    expect(await link.next()).toEqual({ estop: { latched: true } });

    expect((await manager("POST", `/devices/${deviceId}/revoke`, { reason: "lost" })).status).toBe(200);
    expect(await link.next()).toEqual({ close: { reason: "revoked" } });
    expect(await link.close()).toEqual({ code: 1000, reason: "" });
    const again = await refusedSocket(t.gatewayUrl + LINK, { "x-pf-device-credential": credential });
    expect(again).toMatchObject({ status: 401, body: { code: "bot.device.credential_invalid" } });
  });

  it("ends the link when the device closes its socket (bot shows it offline)", async () => {
    const t = platform();
    const { robotId, deviceId, credential } = await pairedOver(t);
    const link = await linked(t, credential);
    await until(async () => (await presence(t, robotId, deviceId))?.online === true);
    link.socket.close(1000);
    await until(async () => (await presence(t, robotId, deviceId))?.online === false);
  });

  it("opens the operator channel for the robot the query names, refused without a token before the upgrade", async () => {
    const t = platform();
    const robot = await robotOf(t);
    const url = `${t.gatewayUrl}/bot/api/v1/control?robot_id=${robot.id}`;
    expect(await refusedSocket(url)).toMatchObject({ status: 401, body: { code: "auth.required" } });
    const operator = { authorization: `Bearer ${await managerToken(t)}`, "x-pf-subject": robot.owner };
    const channel = await openedSocket(url, operator);
    expect(await channel.next()).toMatchObject({ opened: { subject: robot.owner } });
    expect(await channel.next()).toEqual({ robot_id: robot.id, estop: { latched: false } });
    channel.send({ command: { name: "wave", args_json: "{}" } });
    expect(await channel.next()).toMatchObject({ result: { accepted: true } });
    channel.socket.close();
  });

  it("closes with 4000 + status naming the problem when bot refuses a frame (a report before hello)", async () => {
    const t = platform();
    const { credential } = await pairedOver(t);
    const link = await openedSocket(t.gatewayUrl + LINK, { "x-pf-device-credential": credential });
    await link.next();
    link.send({ ack: { job_id: "job_1", received_at: "2026-01-01T00:00:00Z" } });
    const closed = await link.close();
    expect(closed.code).toBe(4400);
    expect(closed.reason).toMatch(/^request\.invalid: /);
  });
}

describe("bot's device link in one process", () => {
  const t = usePlatform({ services: ["bot"], env: { PF_BOT_LINKS_PER_MINUTE: "8" } });
  behaviour(() => t);

  it("answers a device past the route's rate limit 429 with Retry-After, before the upgrade", async () => {
    const { credential } = await pairedOver(t);
    const links: SocketPeer[] = [];
    for (;;) {
      const answer = await openSocket(t.gatewayUrl + LINK, { "x-pf-device-credential": credential });
      if (answer instanceof SocketPeer) {
        links.push(answer);
        continue;
      }
      expect(answer).toMatchObject({ status: 429, body: { code: "rate.limited" } });
      expect(Number(answer.headers["retry-after"])).toBeGreaterThan(0);
      break;
    }
    expect(links.length).toBeLessThanOrEqual(8);
    for (const link of links) link.socket.close();
  });
});

describe("bot's device link with bot in another process (gRPC over HTTP/2 behind the gateway)", () => {
  let bot: TestPlatform;
  let front: TestPlatform;
  beforeAll(async () => {
    const shared = {
      PF_JWT_PRIVATE_KEY: generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
      PF_SEAL_KEY: "seal-key-of-the-websocket-test",
      PF_IP_HASH_KEY: "ip-hash-key-of-the-websocket-test",
    };
    bot = await startTestPlatform({ services: ["bot"], env: { ...shared, PF_GATEWAY: "0" } });
    front = await startTestPlatform({
      services: ["codes"],
      env: {
        ...shared,
        DATABASE_URL: bot.platform.databaseUrl,
        ...(bot.events ? { PF_NATS_NAMESPACE: bot.events.namespace } : {}),
        PF_BOT_URL: bot.platform.rpcUrl,
      },
    });
  });
  afterAll(async () => {
    await front?.stop();
    await bot?.stop();
  });
  behaviour(() => front);
});
