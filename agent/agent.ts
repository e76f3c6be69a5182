import { mkdir, readFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { pino, type Logger } from "pino";
import { NetPolicy } from "../gen/pf/bot/v1/jobs_pb.js";
import type { LinkFrame } from "../gen/pf/bot/v1/link_pb.js";
import { loadCatalogue, type JobClass } from "./catalogue/catalogue.js";
import type { Limits, OwnCaps } from "./job-rules.js";
import { Jobs } from "./jobs.js";
import { frameOf, Link } from "./link.js";
import { pairDevice } from "./pair.js";
import { CodeSandbox } from "./sandbox/code.js";
import { FunctionSandbox } from "./sandbox/function.js";
import { readState, writeState, type AgentState } from "./state.js";

/** The device's own caps unless told otherwise. */
export const DEFAULT_CAPS: OwnCaps = {
  maxTtlMs: 10 * 60_000,
  limits: { memoryBytes: 512 * 1024 * 1024, outputBytes: 16 * 1024 * 1024, cpuMs: 5 * 60_000 },
  slots: 2,
};

export interface AgentOptions {
  /** The state file (credential, device id, e-stop latch), mode 0600. */
  statePath: string;
  /** The gateway's base URL: needed to pair; later starts read it from the state. */
  url?: string;
  /** A one-time pairing code: used when the state holds no live credential. */
  pairCode?: string;
  /** The device's name when it pairs (default: the host name). */
  name?: string;
  /** Where job working directories are made (default: the system's temporary folder). */
  workRoot?: string;
  caps?: { maxTtlMs?: number; slots?: number; limits?: Partial<Limits> };
  logger?: Logger;
  backoff?: { baseMs: number; maxMs: number };
  silenceMs?: number;
}

export interface RunningAgent {
  deviceId: string;
  robotId: string;
  /** The classes it advertises, and why `code` is missing if it is. */
  classes: JobClass[];
  codeUnavailable?: string;
  /** Whether a welcomed link is open now. */
  connected(): boolean;
  /** Settles with why, once bot closed the link for good or refused the credential. */
  closed: Promise<string>;
  /** Stops its jobs, closes the link. */
  stop(): Promise<void>;
}

/**
 * Starts a device agent: pairs if it must (and keeps the credential in the state file), detects what the host can
 * enforce, loads its catalogue, and holds the link to bot, running the jobs it is sent.
 */
export async function startAgent(options: AgentOptions): Promise<RunningAgent> {
  const logger = options.logger ?? pino({ name: "pf-agent" });
  let state = await paired(options, logger);
  const save = async (change: Partial<AgentState>) => {
    state = { ...state, ...change };
    await writeState(options.statePath, state);
  };

  const caps: OwnCaps = {
    maxTtlMs: options.caps?.maxTtlMs ?? DEFAULT_CAPS.maxTtlMs,
    slots: options.caps?.slots ?? DEFAULT_CAPS.slots,
    limits: { ...DEFAULT_CAPS.limits, ...options.caps?.limits },
  };
  const code = await CodeSandbox.detect();
  if (!code.available) logger.warn({ why: code.why }, "class code is not offered");
  const classes: JobClass[] = code.available ? ["function", "code"] : ["function"];
  const catalogue = await loadCatalogue(classes);
  const functions = new FunctionSandbox(caps.slots);
  const workRoot = options.workRoot ?? join(tmpdir(), "pf-agent");
  await mkdir(workRoot, { recursive: true, mode: 0o700 });
  const version = await agentVersion();

  const jobs = new Jobs({
    catalogue,
    caps,
    code,
    functions,
    workRoot,
    logger,
    mediaUrl: new URL("media", state.url.endsWith("/") ? state.url : `${state.url}/`).href,
    send: (frame) => link.send(frame),
  });
  jobs.estop(state.estop ?? false);

  let onClosed: (why: string) => void = () => {};
  const closed = new Promise<string>((resolve) => (onClosed = resolve));
  const hello = () =>
    frameOf({
      case: "hello",
      value: {
        agentVersion: version,
        classes,
        artifacts: [...catalogue.values()].map(({ name, class: jobClass, sha256 }) => ({
          name,
          class: jobClass,
          sha256,
        })),
        caps: {
          maxTtlMs: BigInt(caps.maxTtlMs),
          limits: {
            memoryBytes: BigInt(caps.limits.memoryBytes),
            outputBytes: BigInt(caps.limits.outputBytes),
            cpuMs: BigInt(caps.limits.cpuMs),
          },
          // Both classes enforce deny (a function has no socket; code runs in an empty network namespace), and no
          // egress filter is offered: public and platform jobs run with deny, the stricter policy.
          net: [NetPolicy.NONE],
          slots: caps.slots,
        },
        runningJobIds: [...new Set([...jobs.ids(), ...link.queuedJobIds()])],
      },
    });

  const onFrame = (frame: LinkFrame) => {
    const { case: kind, value } = frame.frame;
    switch (kind) {
      case "welcome":
        logger.info({ device: value.deviceId, robot: value.robotId, estop: value.estop }, "link open");
        return latch(value.estop);
      case "job":
        return jobs.receive(value);
      case "jobCancel":
        return jobs.cancel(value.jobId);
      case "estop":
        return latch(value.latched);
      case "command":
        // A real robot drives its hardware here; this one logs, and never while the e-stop is latched.
        if (state.estop) return logger.warn({ command: value.id, name: value.name }, "command refused: e-stop latched");
        return logger.info({ command: value.id, name: value.name, args: value.argsJson }, "command");
      case "close":
        return logger.warn({ reason: value.reason }, "bot closed the link");
      default:
        logger.debug({ frame: kind }, "a frame for bot, not for a device: ignored");
    }
  };
  const latch = (latched: boolean) => {
    jobs.estop(latched);
    if (latched !== (state.estop ?? false)) {
      logger.warn({ latched }, latched ? "e-stop latched" : "e-stop cleared");
      void save({ estop: latched }).catch((error: unknown) => logger.error({ error }, "the state was not saved"));
    }
  };

  const link: Link = new Link({
    url: state.url,
    credential: state.credential,
    logger,
    hello,
    onFrame,
    backoff: options.backoff,
    silenceMs: options.silenceMs,
    onClosed: (why) => {
      logger.warn({ why }, "the credential is no longer good: stopping; pair again with a new code");
      void save({ closed: why })
        .then(() => jobs.stopAll(why))
        .catch((error: unknown) => logger.error({ error }, "stopping failed"))
        .finally(() => onClosed(why));
    },
  });
  link.start();

  return {
    deviceId: state.device_id,
    robotId: state.robot_id,
    classes,
    ...(code.available ? {} : { codeUnavailable: code.why }),
    connected: () => link.connected(),
    closed,
    async stop() {
      await jobs.stopAll("the agent stopped");
      await link.stop();
      await functions.close();
    },
  };
}

/** The state with a live credential: read, or made by pairing with the code (then saved before anything else). */
async function paired(options: AgentOptions, logger: Logger): Promise<AgentState> {
  const state = await readState(options.statePath);
  if (state && !state.closed) {
    if (options.pairCode) logger.info({ device: state.device_id }, "already paired: the pairing code is not used");
    return options.url ? { ...state, url: options.url } : state;
  }
  if (!options.pairCode && state?.closed)
    throw new Error(`the credential of ${state.device_id} is no longer good (${state.closed}): pair again`);
  if (!options.pairCode) throw new Error("not paired yet: start with --pair <code> --url <gateway url>");
  const url = options.url ?? state?.url;
  if (!url) throw new Error("pairing needs the gateway's address: --url <gateway url>");
  const result = await pairDevice(url, options.pairCode, options.name ?? hostname());
  const fresh: AgentState = {
    url,
    device_id: result.deviceId,
    robot_id: result.robotId,
    credential: result.credential,
    publish_key: result.publishKey,
  };
  await writeState(options.statePath, fresh);
  logger.info({ device: fresh.device_id, robot: fresh.robot_id }, "paired");
  return fresh;
}

/**
 * This repository's version, which the agent ships in: the nearest package.json above the module (the repository's
 * above agent/, dist/ or `npm start`'s bundle in node_modules/.cache/pf-platform; the image's beside dist/).
 */
async function agentVersion(): Promise<string> {
  for (let folder = new URL(".", import.meta.url); ; folder = new URL("..", folder)) {
    const text = await readFile(new URL("package.json", folder), "utf8").catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT" && folder.pathname !== "/") return undefined;
      throw error;
    });
    if (text !== undefined) return (JSON.parse(text) as { version: string }).version;
  }
}
