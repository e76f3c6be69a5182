import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readState } from "../../agent/state.js";
import { ESTOP_LATCHED, INPUT_DIGEST_MISMATCH } from "../../agent/jobs.js";
import { appClaims, upload } from "../media/support.js";
import { project, projectClaims, ROBOT_MANAGER, runCall, untilBilled } from "../run/support.js";
import { usePlatform, type TestPlatform } from "../support/platform.js";
import { openEventStream, type EventStreamReader, type SentEvent } from "../support/sse.js";
import { watchdog } from "../support/timers.js";
import { until } from "../support/until.js";
import { sha256 } from "./support.js";

/**
 * The real device agent (`npm run agent`, a child process) paired with a code from bot's pairing-code route, on the
 * gateway's real WebSocket, running jobs submitted through run, its output read over run's SSE.
 */
const t = usePlatform({ services: ["run", "bot", "billing", "media"] });

/** An agent process and the log lines it printed (pino JSON). */
class AgentProcess {
  readonly logs: { msg: string; time: number; [key: string]: unknown }[] = [];
  readonly exited: Promise<number | null>;
  private constructor(private readonly child: ChildProcess) {
    let partial = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      const lines = (partial + chunk.toString()).split("\n");
      partial = lines.pop()!;
      for (const line of lines) if (line.startsWith("{")) this.logs.push(JSON.parse(line));
    });
    child.stderr!.resume();
    this.exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)));
  }

  /** `npm run agent -- <args>` in its own process group (npm, tsx and node stop together). */
  static start(args: string[]): AgentProcess {
    return new AgentProcess(
      spawn("npm", ["run", "-s", "agent", "--", ...args], { detached: true, stdio: ["ignore", "pipe", "pipe"] }),
    );
  }

  logged(msg: string, match: Record<string, unknown> = {}) {
    return this.logs.find((line) => line.msg === msg && Object.entries(match).every(([k, v]) => line[k] === v));
  }

  /** Whether any process of its group (npm, tsx, the agent) is still there. */
  private alive(): boolean {
    try {
      process.kill(-this.child.pid!, 0);
      return true;
    } catch {
      return false;
    }
  }

  /** SIGTERM to the group (npm itself dies of it; the agent stops its jobs and link first), then its end. */
  async stop(): Promise<void> {
    const cancel = watchdog(15_000, () => this.alive() && process.kill(-this.child.pid!, "SIGKILL"));
    if (this.alive()) process.kill(-this.child.pid!, "SIGTERM");
    await until(() => !this.alive(), 20_000);
    cancel();
  }
}

/** A robot with a fresh pairing code from the pairing-code route, and an agent started with it. */
async function pairedAgent(platform: TestPlatform, dir: string, extra: string[] = []) {
  const manager = await platform.token(ROBOT_MANAGER);
  const created = await platform.http("POST", "/bot/api/v1/robots", {
    token: manager,
    body: { owner: "usr_agent1", name: "arm" },
  });
  expect(created.status).toBe(201);
  const robotId: string = created.body.robot.id;
  const issued = await platform.http("POST", `/bot/api/v1/robots/${robotId}/pairing-code`, { token: manager });
  expect(issued.status).toBe(201);
  const statePath = join(dir, `${robotId}.json`);
  const args = ["--url", platform.gatewayUrl, "--state", statePath, "--work-dir", join(dir, "work"), ...extra];
  const agent = AgentProcess.start(["--pair", issued.body.pairing_code.code, ...args]);
  await untilOnline(platform, manager, robotId).catch(async (error: unknown) => {
    await agent.stop();
    throw error;
  });
  return { agent, robotId, statePath, args, manager };
}

/** Waits until the robot's device is online, advertising class function. */
async function untilOnline(platform: TestPlatform, manager: string, robotId: string) {
  await until(async () => {
    const read = await platform.http("GET", `/bot/api/v1/robots/${robotId}/devices`, { token: manager });
    const devices: { online: boolean; classes: string[] }[] = read.body?.devices?.devices ?? [];
    return devices.some((device) => device.online && device.classes.includes("function"));
  }, 30_000);
}

/** The events of a stream up to its end. */
async function rest(stream: EventStreamReader): Promise<SentEvent[]> {
  const events = [];
  for (let event = await stream.next(15_000); event; event = await stream.next(15_000)) events.push(event);
  return events;
}

const stdoutText = (events: SentEvent[]) =>
  events
    .flatMap((event) =>
      event.event === "output" && event.data.output.stream === "OUTPUT_STREAM_STDOUT" ? [event.data.output.text] : [],
    )
    .join("");

describe("the device agent, end to end", () => {
  let dir: string;
  let agent: AgentProcess;
  let robotId: string;
  let statePath: string;
  let args: string[];
  let manager: string;
  let call: ReturnType<typeof runCall>;
  let token: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "pf-agent-e2e-"));
    // One slot, so a second job waits on the device (placed, its frame there) while the first runs.
    ({ agent, robotId, statePath, args, manager } = await pairedAgent(t, dir, ["--slots", "1"]));
    token = await t.token(projectClaims(project()));
    call = runCall(t, token);
  }, 60_000);
  afterAll(async () => {
    await agent?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const submit = async (body: Record<string, unknown>) => {
    const answer = await call("POST", "/jobs", { class: "function", ttl_ms: 60_000, limits: {}, ...body });
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    return answer.body.job.id as string;
  };
  const read = async (id: string) => (await call("GET", `/jobs/${id}`)).body.job;
  const untilState = (id: string, state: string) => until(async () => (await read(id)).state === state, 30_000);
  const ended = async (id: string) => {
    await untilState(id, "ended");
    return read(id);
  };

  it("runs a job submitted through run: output over SSE with a resume in the middle, exit, usage billed once", async () => {
    const id = await submit({ artifact: "printer", args: { lines: 6, pause_ms: 150 } });
    const url = `${t.gatewayUrl}/run/api/v1/jobs/${id}/stream`;
    const { ticket } = (await call("POST", `/jobs/${id}/stream/ticket`, {})).body;
    const first = (await openEventStream(`${url}?ticket=${ticket}`)).stream!;
    const seen: SentEvent[] = [];
    while (!stdoutText(seen).includes("line 2\n")) seen.push((await first.next(15_000))!);
    await first.close();
    const last = seen.at(-1)!;
    const resumed = await rest(
      (await openEventStream(url, { authorization: `Bearer ${token}`, "last-event-id": last.id! })).stream!,
    );
    expect(Number(resumed[1].id)).toBe(Number(last.id) + 1);
    expect(stdoutText([...seen, ...resumed])).toBe("line 1\nline 2\nline 3\nline 4\nline 5\nline 6\n");
    expect(resumed.at(-1)!.data.state).toMatchObject({ state: "ended", exit: { reason: "completed", code: 0 } });
    const job = await read(id);
    expect(job.result).toMatchObject({ stdout: "line 1\nline 2\nline 3\nline 4\nline 5\nline 6\n" });
    expect(job.result.stderr).toBe("printed 6 lines\n");
    // Billed once, in wall-clock seconds rounded up: six lines 150 ms apart take one, or more on a loaded machine.
    const billed = await untilBilled(t, id);
    const { usage_seconds: seconds, timings } = await read(id);
    expect(billed).toEqual([Number(seconds)]);
    expect(Number(seconds)).toBe(Math.ceil((Date.parse(timings.ended_at) - Date.parse(timings.started_at)) / 1000));
  });

  it("kills a running job on cancel; one waiting on the device (placed) never starts; an ended one is unchanged", async () => {
    const running = await submit({ artifact: "sleep", args: { ms: 60_000 } });
    await untilState(running, "running");
    const waiting = await submit({ artifact: "echo", args: { text: "never" } });
    await untilState(waiting, "placed");
    await until(() => agent.logged("job received", { job: waiting }) !== undefined);
    expect((await call("POST", `/jobs/${waiting}/cancel`, {})).status).toBe(200);
    expect((await call("POST", `/jobs/${running}/cancel`, {})).status).toBe(200);
    expect(await ended(running)).toMatchObject({ exit: { reason: "canceled", signal: "SIGKILL" } });
    expect((await ended(waiting)).exit.reason).toBe("canceled");
    await until(() => agent.logged("job ended", { job: waiting }) !== undefined);
    expect(agent.logged("job ended", { job: waiting })).toMatchObject({ reason: "CANCELED" });
    expect(agent.logged("job started", { job: waiting })).toBeUndefined();
    const again = await call("POST", `/jobs/${running}/cancel`, {});
    expect(again.body.job).toMatchObject({ state: "ended", exit: { reason: "canceled" } });
  });

  it("ends a job by its ttl while running and while it waits for the slot; kills one past a limit", async () => {
    const long = await submit({ artifact: "sleep", args: { ms: 60_000 }, ttl_ms: 1_500 });
    await untilState(long, "running");
    const starved = await submit({ artifact: "echo", args: { text: "late" }, ttl_ms: 500 });
    expect(await ended(long)).toMatchObject({ exit: { reason: "ttl", signal: "SIGKILL" } });
    const late = await ended(starved);
    expect(late.exit.reason).toBe("ttl");
    expect(late.timings.started_at ?? undefined).toBeUndefined();
    const chatty = await submit({ artifact: "printer", args: { lines: 100_000 }, limits: { output_bytes: 300 } });
    expect(await ended(chatty)).toMatchObject({ exit: { reason: "limit", limit: "output_bytes" } });
    expect((await read(chatty)).result.stdout).toHaveLength(300);
  });

  it("checks inputs from media before start: the pinned bytes run, others end input_digest_mismatch", async () => {
    const bytes = Buffer.from("input bytes\n");
    const uploaded = await upload(t, await t.token(appClaims("agentapp")), bytes, "in.txt", "text/plain", "agentapp");
    expect(uploaded.status).toBe(201);
    const key: string = uploaded.body.file?.key ?? uploaded.body.key;
    const input = { name: "in.txt", media_key: key, size: bytes.length, sha256: sha256(bytes) };
    const good = await submit({ artifact: "echo", args: { text: "with input" }, inputs: [input] });
    expect((await ended(good)).exit.reason).toBe("completed");
    const bad = await submit({
      artifact: "echo",
      args: { text: "x" },
      inputs: [{ ...input, sha256: sha256("other") }],
    });
    const job = await ended(bad);
    expect(job.exit).toMatchObject({ reason: "input_digest_mismatch", code_name: INPUT_DIGEST_MISMATCH });
    expect(job.timings.started_at ?? undefined).toBeUndefined();
  });

  it("stops its jobs when the robot's e-stop latches, and runs again once it is cleared", async () => {
    const running = await submit({ artifact: "sleep", args: { ms: 60_000 } });
    await untilState(running, "running");
    const control = await t.token({ kind: "service", svc: "web", caps: ["bot.robot.control", "bot.robot.read"] });
    expect((await t.http("POST", `/bot/api/v1/robots/${robotId}/estop`, { token: control })).status).toBe(200);
    expect((await ended(running)).exit).toMatchObject({ reason: "canceled", code_name: ESTOP_LATCHED });
    await until(async () => (await readState(statePath))?.estop === true);
    expect((await t.http("DELETE", `/bot/api/v1/robots/${robotId}/estop`, { token: manager })).status).toBe(200);
    await until(async () => (await readState(statePath))?.estop === false);
    expect((await ended(await submit({ artifact: "sum", args: { numbers: [1, 2] } }))).result.stdout).toBe("3\n");
  });

  it("restarts from its state file without pairing again", async () => {
    await agent.stop();
    expect(agent.logged("stopping")).toBeDefined();
    agent = AgentProcess.start(args);
    await untilOnline(t, manager, robotId);
    expect((await ended(await submit({ artifact: "echo", args: { text: "back" } }))).exit.reason).toBe("completed");
  });

  it("is closed at once when its device is revoked, and does not reconnect", async () => {
    const { device_id } = (await readState(statePath))!;
    const revoked = await t.http("POST", `/bot/api/v1/devices/${device_id}/revoke`, {
      token: manager,
      body: { reason: "lost" },
    });
    const answeredAt = Date.now();
    expect(revoked.status).toBe(200);
    // 2: the credential is gone, a supervisor should not restart it.
    expect(await agent.exited).toBe(2);
    const closed = agent.logged("bot closed the link");
    expect(closed).toMatchObject({ reason: "revoked" });
    expect(closed!.time - answeredAt).toBeLessThan(100);
    expect((await readState(statePath))?.closed).toBe("closed: revoked");
    const restarted = AgentProcess.start(args);
    expect(await restarted.exited).toBe(1);
  });
});
