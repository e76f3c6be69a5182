import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAgent, type AgentOptions, type RunningAgent } from "../../agent/agent.js";
import { loadCatalogue } from "../../agent/catalogue/catalogue.js";
import { readState, writeState } from "../../agent/state.js";
import { botCall, dispatchBody, jobFrame, managerToken, pairingCode, robotOf, runToken } from "../bot/support.js";
import { usePlatform } from "../support/platform.js";
import { TcpProxy } from "../support/tcp-proxy.js";
import { until } from "../support/until.js";

/**
 * The device agent (startAgent, in this process) against the real platform: paired with codes from bot's routes, on
 * the gateway's real WebSocket, jobs dispatched through bot's dispatch route, what it said read back through bot's
 * routes. The agent reaches the gateway through a TCP proxy, so a test can drop its link as a network would.
 */
const t = usePlatform({ services: ["bot"] });

interface DeviceRead {
  id: string;
  name: string;
  online: boolean;
  connected_at?: string;
  agent_version?: string;
  classes?: string[];
  artifacts?: { name: string; class: string; sha256: string }[];
  caps?: { net?: string[]; slots?: number };
}

describe("the device agent on its link to the real bot", () => {
  let dir: string;
  let proxy: TcpProxy;
  let manager: ReturnType<typeof botCall>;
  let run: ReturnType<typeof botCall>;
  let robot: { id: string; code: string };
  const codes: string[] = [];
  const secrets: string[] = [];
  const logs: string[] = [];
  const logger = pino({ level: "debug" }, { write: (line: string) => void logs.push(line) });
  const agents: RunningAgent[] = [];
  const statePath = () => join(dir, "state.json");
  const start = async (options: Partial<AgentOptions> = {}) => {
    const agent = await startAgent({
      statePath: statePath(),
      url: `http://127.0.0.1:${proxy.port}`,
      logger,
      backoff: { baseMs: 20, maxMs: 100 },
      workRoot: join(dir, "work"),
      ...options,
    });
    agents.push(agent);
    return agent;
  };
  /** The robot's devices as bot's devices route reads them. */
  const devices = async (): Promise<DeviceRead[]> => {
    const read = await manager("GET", `/robots/${robot.id}/devices`);
    expect(read.status).toBe(200);
    return read.body.devices.devices ?? [];
  };
  const device = async (id: string) => (await devices()).find((each) => each.id === id);
  const untilOnline = (id: string) => until(async () => (await device(id))?.online === true);
  const job = async (id: string) => (await run("GET", `/jobs/${id}`)).body.job;
  const untilState = async (id: string, state: string) => {
    await until(async () => (await job(id)).state === `DISPATCH_STATE_${state}`);
    return job(id);
  };
  const dispatch = async (nodeId: string, frame: Record<string, unknown>) => {
    const body = dispatchBody({ node_id: nodeId, job: jobFrame(frame) });
    const answer = await run("POST", "/jobs", body);
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    return body.id;
  };
  /** Keeps what the agent must never log: secrets bot handed out, and the codes it paired with. */
  const remember = async () => {
    const state = (await readState(statePath()))!;
    secrets.push(state.credential, state.publish_key);
    return state;
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "pf-agent-link-"));
    const gateway = new URL(t.gatewayUrl);
    proxy = new TcpProxy(gateway.hostname, Number(gateway.port));
    await proxy.open();
    manager = botCall(t, await managerToken(t));
    run = botCall(t, await runToken(t));
    robot = await robotOf(t);
    codes.push(robot.code);
  });
  afterAll(async () => {
    await Promise.all(agents.map((agent) => agent.stop()));
    await proxy?.cut();
    await rm(dir, { recursive: true, force: true });
  });

  it("pairs once with the code, keeps the credential 0600, links with it and bot records its hello", async () => {
    const agent = await start({ pairCode: robot.code, name: "arm-1" });
    const state = await remember();
    expect(state).toMatchObject({ device_id: agent.deviceId, robot_id: robot.id });
    expect(state.credential).not.toBe("");
    expect(state.publish_key).not.toBe("");
    expect((await stat(statePath())).mode & 0o777).toBe(0o600);
    // bot takes the credential only in the link's header: online means the link was opened with it.
    await untilOnline(agent.deviceId);
    const { version } = JSON.parse(await readFile(new URL("../../package.json", import.meta.url), "utf8")) as {
      version: string;
    };
    await until(async () => (await device(agent.deviceId))?.agent_version === version);
    const read = (await devices()).map(({ id, name }) => ({ id, name }));
    expect(read).toEqual([{ id: agent.deviceId, name: "arm-1" }]);
    const advertised = (await device(agent.deviceId))!;
    const catalogue = await loadCatalogue(agent.classes);
    expect(advertised.classes).toEqual(agent.classes);
    expect(
      advertised.artifacts!.map(({ name, class: jobClass, sha256 }) => ({ name, class: jobClass, sha256 })),
    ).toEqual([...catalogue.values()].map(({ name, class: jobClass, sha256 }) => ({ name, class: jobClass, sha256 })));
    expect(advertised.caps).toMatchObject({ net: ["NET_POLICY_NONE"], slots: 2 });
    await agent.stop();
    await until(async () => (await device(agent.deviceId))?.online === false);
  });

  it("reuses the stored credential on a later start, without pairing again, and runs what bot dispatches", async () => {
    const agent = await start({ pairCode: robot.code, caps: { slots: 3 } });
    // A hello with the new caps recorded: this start linked with the stored credential.
    await until(async () => (await device(agent.deviceId))?.caps?.slots === 3);
    expect((await devices()).map(({ id }) => id)).toEqual([agent.deviceId]);
    expect(logs.some((line) => line.includes("already paired: the pairing code is not used"))).toBe(true);
    expect(agent.connected()).toBe(true);

    const id = await dispatch(agent.deviceId, { artifact: "sum", args: { numbers: [2, 3] } });
    const ended = await untilState(id, "ENDED");
    expect(ended).toMatchObject({ stdout: "5\n", exit: { reason: "EXIT_REASON_COMPLETED" } });
    for (const at of ["received_at", "started_at", "ended_at"]) expect(ended[at]).toBeDefined();
  });

  it("links again after its connection drops, naming the job it still runs (bot keeps it, not lost)", async () => {
    const [agent] = agents.slice(-1);
    const id = await dispatch(agent.deviceId, { artifact: "sleep", args: { ms: 60_000 } });
    await untilState(id, "RUNNING");
    const before = (await device(agent.deviceId))!.connected_at;
    proxy.reset();
    await until(async () => {
      const read = await device(agent.deviceId);
      return read?.online === true && read.connected_at !== before;
    });
    // A hello without the job would end it lost; named, it stays the device's, and bot's cancel reaches it.
    expect((await run("POST", `/jobs/${id}/cancel`, {})).status).toBe(200);
    const ended = await untilState(id, "ENDED");
    expect(ended.exit).toMatchObject({ reason: "EXIT_REASON_CANCELED", signal: "SIGKILL" });
  });

  it("stops for good on bot's close frame when its device is revoked, and will not start on that credential", async () => {
    const [agent] = agents.slice(-1);
    const revoked = await manager("POST", `/devices/${agent.deviceId}/revoke`, { reason: "lost" });
    expect(revoked.status).toBe(200);
    expect(await agent.closed).toBe("closed: revoked");
    expect((await readState(statePath()))?.closed).toBe("closed: revoked");
    await expect(start()).rejects.toThrow("no longer good");
  });

  it("pairs again with a new code once its credential was closed", async () => {
    const code = await pairingCode(t, robot.id);
    codes.push(code);
    const previous = agents.at(-1)!.deviceId;
    const agent = await start({ pairCode: code });
    await remember();
    expect(agent.deviceId).not.toBe(previous);
    expect((await readState(statePath()))?.closed).toBeUndefined();
    await untilOnline(agent.deviceId);
    // Bot records the link before the agent has read the upgrade's answer: stopped only once its link is open.
    await until(() => agent.connected());
    await agent.stop();
    await until(async () => (await device(agent.deviceId))?.online === false);
  });

  it("latches the e-stop from welcome, and runs again once bot clears it", async () => {
    const deviceId = agents.at(-1)!.deviceId;
    expect((await readState(statePath()))?.estop ?? false).toBe(false);
    // Dispatched while the device is away, then the robot latched: bot holds the frame back.
    const id = await dispatch(deviceId, { artifact: "echo", args: { text: "after the latch" } });
    expect((await manager("POST", `/robots/${robot.id}/estop`)).status).toBe(200);
    const agent = await start();
    await until(async () => (await readState(statePath()))?.estop === true);
    expect((await manager("DELETE", `/robots/${robot.id}/estop`)).status).toBe(200);
    await until(async () => (await readState(statePath()))?.estop === false);
    // Had it reached the device while latched, the device would have refused it.
    const ended = await untilState(id, "ENDED");
    expect(ended).toMatchObject({ stdout: '{"text":"after the latch"}\n', exit: { reason: "EXIT_REASON_COMPLETED" } });
    expect(agent.connected()).toBe(true);
  });

  it("stops when the upgrade refuses its credential (401), without retrying", async () => {
    const [agent] = agents.slice(-1);
    const stale = (await readState(statePath()))!;
    const rotated = await manager("POST", `/devices/${agent.deviceId}/rotate`);
    expect(rotated.status).toBe(200);
    secrets.push(rotated.body.credential, rotated.body.publish_key);
    expect(await agent.closed).toBe("closed: rotated");
    // Another copy of the state, holding the credential rotation replaced.
    const other = join(dir, "stale-state.json");
    await writeState(other, { ...stale, closed: undefined });
    const refused = await start({ statePath: other });
    expect(await refused.closed).toBe("refused at the upgrade: 401 bot.device.credential_invalid");
    expect((await readState(other))?.closed).toBe("refused at the upgrade: 401 bot.device.credential_invalid");
    expect(logs.some((line) => line.includes("the link was not upgraded; retrying"))).toBe(false);
  });

  it("never writes a credential, a publish key or a pairing code to its log", () => {
    expect(logs.length).toBeGreaterThan(10);
    expect(secrets.length).toBe(6);
    expect(codes.length).toBe(2);
    const all = logs.join("");
    for (const secret of [...secrets, ...codes]) expect(all).not.toContain(secret);
  });
});
