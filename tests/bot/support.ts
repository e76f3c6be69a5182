import { BotLinkService, ControlFrameSchema } from "../../gen/pf/bot/v1/link_service_pb.js";
import { qualified } from "../../services/kit/db/orm.js";
import { pairDevice, StreamPeer, TestDevice, type HelloOptions, type PairedDevice } from "../support/device.js";
import { outboxEvents } from "../support/outbox.js";
import type { TestPlatform } from "../support/platform.js";
import { until } from "../support/until.js";

/** The capabilities of the first-party service that manages robots (the web app's backend). */
export const MANAGER_CAPS = ["bot.robot.manage", "bot.robot.read", "bot.robot.control"];

/** A token of the managing service. */
export const managerToken = (t: TestPlatform) => t.token({ kind: "service", svc: "web", caps: MANAGER_CAPS });

/** The job-run service's token: the only caller dispatch takes. */
export const runToken = (t: TestPlatform) => t.token({ kind: "service", svc: "run", caps: ["bot.job.dispatch"] });

let n = 0;
/** A fresh id body, unique within a run (lowercase letters and digits, as ids take). */
export const fresh = (tag: string) => `${tag}${Date.now().toString(36)}${(n++).toString(36)}`;

/** Calls a bot route through the gateway. */
export function botCall(t: TestPlatform, token?: string, headers: Record<string, string> = {}) {
  return (method: string, path: string, body?: unknown) =>
    t.http(method, `/bot/api/v1${path}`, { token, body, headers });
}

/** A robot created by the managing service for `owner` (a fresh person unless given): its id and pairing code. */
export async function robotOf(t: TestPlatform, owner = `usr_${fresh("o")}`, body: Record<string, unknown> = {}) {
  const answer = await botCall(t, await managerToken(t))("POST", "/robots", { owner, name: "Rover", ...body });
  if (answer.status !== 201) throw new Error(`create failed: ${answer.status} ${JSON.stringify(answer.body)}`);
  return { id: answer.body.robot.id as string, owner, code: answer.body.pairing_code.code as string };
}

/** A new pairing code for a robot (the managing service). */
export async function pairingCode(t: TestPlatform, robotId: string): Promise<string> {
  const answer = await botCall(t, await managerToken(t))("POST", `/robots/${robotId}/pairing-code`);
  if (answer.status !== 201) throw new Error(`pairing code failed: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body.pairing_code.code as string;
}

/** A fresh robot with one device paired and linked (hello said). */
export async function linkedDevice(
  t: TestPlatform,
  hello: HelloOptions = {},
): Promise<{ robot: { id: string; owner: string }; paired: PairedDevice; device: TestDevice }> {
  const robot = await robotOf(t);
  const paired = await pairDevice(t, robot.code);
  const device = await TestDevice.connect(t, paired.credential, hello);
  return { robot, paired, device };
}

/** A job frame as JSON (platform.job@1's `job`): an echo function with generous limits and no network. */
export function jobFrame(extra: Record<string, unknown> = {}) {
  return {
    class: "function",
    artifact: "echo",
    args: { text: "hello" },
    ttl_ms: 60_000,
    limits: { memory_bytes: 64 * 1024 * 1024, output_bytes: 1024 * 1024, cpu_ms: 10_000 },
    ...extra,
  };
}

/** A dispatch body for a fresh job id: to `node_id` when given, else to whichever online device advertises the class. */
export function dispatchBody(extra: Record<string, unknown> = {}) {
  return { id: `job_${fresh("j")}`, project_id: "prj_1", job: jobFrame(), provider: "run", ...extra };
}

/**
 * An operator channel (/control) over the typed client's bidi stream, as `token` (with X-PF-Subject when given),
 * once bot has sent `opened`. Send a command with `send({ case: "command", value }, { robotId })`.
 */
export async function controlChannel(t: TestPlatform, token: string, headers: Record<string, string> = {}) {
  const channel = new StreamPeer(ControlFrameSchema, (requests) =>
    t.client(BotLinkService, token).control(requests, { headers }),
  );
  await channel.next("opened");
  return channel;
}

/** The audit rows the database keeps for a robot, oldest first (a deleted robot's routes answer 404). */
export async function auditRows(t: TestPlatform, robotId: string): Promise<{ action: string; actor: string }[]> {
  const em = t.platform.contexts.get("bot")!.orm.em;
  return em
    .getConnection()
    .execute(`select action, actor from ${qualified(em, "robot_audit")} where robot_id = ? order by id`, [robotId]);
}

/** The bot.job.* events of a job, in the order written, with their payloads. */
export async function jobEvents(t: TestPlatform, jobId: string): Promise<Record<string, unknown>[]> {
  return (await outboxEvents(t, "bot", jobId))
    .filter((event) => event.subject.startsWith("bot.job."))
    .map((event) => ({ subject: event.subject, ...(JSON.parse(event.payload) as Record<string, unknown>) }));
}

/** Reads a job (as the job-run service) until it stands in `state`, and answers it. */
export async function jobIn(t: TestPlatform, id: string, state: string): Promise<Record<string, unknown>> {
  const run = botCall(t, await runToken(t));
  let job: Record<string, unknown> = {};
  await until(async () => {
    job = (await run("GET", `/jobs/${id}`)).body.job;
    return job.state === state;
  });
  return job;
}
