import { BotService } from "../../gen/pf/bot/v1/bot_pb.js";
import type { TokenClaims } from "../../services/kit/auth/tokens.js";
import { qualified } from "../../services/kit/db/orm.js";
import type { RunContext } from "../../services/run/context.js";
import { pairDevice, TestDevice, type HelloOptions } from "../support/device.js";
import type { TestPlatform } from "../support/platform.js";
import { until } from "../support/until.js";

/** Every capability of the public job routes: what a project's app holds. */
export const PROJECT_CAPS = ["run.job.list", "run.job.submit", "run.job.read", "run.job.cancel", "run.job.stream"];

let n = 0;
/** A fresh word, unique within a run. */
export const fresh = (tag: string) => `${tag}${Date.now().toString(36)}${(n++).toString(36)}`;

/** A fresh project's id. */
export const project = () => fresh("prj_");

/** A project's app token: the job routes' capabilities and the project's id. */
export function projectClaims(projectId: string, extra: Partial<TokenClaims> = {}): TokenClaims {
  return { kind: "app", app_id: fresh("app"), caps: PROJECT_CAPS, project_id: projectId, ...extra };
}

/** An operator's service token: run.job.admin, acting for nobody. */
export const ADMIN: TokenClaims = { kind: "service", svc: "ops", caps: ["run.job.admin"] };

/** A valid job: the built-in echo function, one minute to live. */
export function jobBody(extra: Record<string, unknown> = {}) {
  return { class: "function", artifact: "echo", args: { text: "hello" }, ttl_ms: 60_000, limits: {}, ...extra };
}

/** The context the host built for run: the one its handlers, workers and consumers share. */
export function runOf(t: TestPlatform): RunContext {
  return t.platform.contexts.get("run") as RunContext;
}

/** Calls a run route through the gateway with this token. */
export function runCall(t: TestPlatform, token?: string, headers: Record<string, string> = {}) {
  return (method: string, path: string, body?: unknown) =>
    t.http(method, `/run/api/v1${path}`, { token, body, headers });
}

/** Submits a job as the token's project and answers it (201 expected). */
export async function submitted(t: TestPlatform, token: string, extra: Record<string, unknown> = {}) {
  const answer = await runCall(t, token)("POST", "/jobs", jobBody(extra));
  if (answer.status !== 201) throw new Error(`submit failed: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body.job as { id: string; state: string; project_id: string };
}

/** The first-party service that manages robots (the web app's backend). */
export const ROBOT_MANAGER: TokenClaims = { kind: "service", svc: "web", caps: ["bot.robot.manage", "bot.robot.read"] };

/**
 * A scripted device paired to a new robot, linked, and seen online by bot advertising `jobClass` only (a class of
 * its own, so no other test's device takes its jobs).
 */
export async function onlineDevice(t: TestPlatform, jobClass: string, hello: HelloOptions = {}) {
  const bot = t.client(BotService, await t.token(ROBOT_MANAGER));
  const created = await bot.createRobot({ owner: "usr_a1", name: "runner" });
  const paired = await pairDevice(t, created.pairingCode!.code);
  const device = await TestDevice.connect(t, paired.credential, {
    classes: [jobClass],
    artifacts: [{ name: "echo", class: jobClass, sha256: "0".repeat(64) }],
    ...hello,
  });
  await until(async () => {
    const read = await bot.listRobotDevices({ id: created.robot!.id });
    return (
      read.result.case === "devices" && read.result.value.devices.some((d) => d.online && d.classes.includes(jobClass))
    );
  });
  return { device, deviceId: paired.deviceId, robotId: created.robot!.id };
}

/** The usage billing recorded for a job: its quantities (one record is the contract). */
export async function billedUsage(t: TestPlatform, jobId: string): Promise<number[]> {
  const em = t.platform.contexts.get("billing")!.orm.em.fork();
  const rows = await em
    .getConnection()
    .execute<{ quantity: string }[]>(
      `select quantity from ${qualified(em, "usage_records")} where service = 'run' and operation = 'function.invoke' and unit = 's' and reference = ?`,
      [jobId],
    );
  return rows.map((row) => Number(row.quantity));
}

/** Waits until billing recorded the job's usage, and answers the quantities recorded. */
export async function untilBilled(t: TestPlatform, jobId: string): Promise<number[]> {
  await until(async () => (await billedUsage(t, jobId)).length > 0);
  return billedUsage(t, jobId);
}
