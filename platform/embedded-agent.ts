import { spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { createClient } from "@connectrpc/connect";
import { readState } from "../agent/state.js";
import { BotService } from "../gen/pf/bot/v1/bot_pb.js";
import type { Logger } from "../services/kit/runtime/logger.js";
import type { Platform } from "./host.js";
import type { Config } from "../services/kit/runtime/config.js";

/** The robot `npm start` pairs its own agent to: a platform-owned one, made once (the key makes a retry the same). */
const OWNER = "usr_platform";
const ROBOT = { owner: OWNER, name: "embedded agent", idempotencyKey: "pf-embedded-agent" };

/** Whether `npm start` runs an embedded device agent: bot and run here, the gateway on, not production, not PF_EMBEDDED_AGENT=0. */
export function embeddedAgentWanted(config: Config, env: NodeJS.ProcessEnv = process.env): boolean {
  const here = (key: string) => !config.services || config.services.includes(key);
  return here("bot") && here("run") && config.gateway && !config.production && env.PF_EMBEDDED_AGENT !== "0";
}

/** A running embedded agent: its pairing (robot and device, once its link is open) and its stop. */
export interface EmbeddedAgent {
  paired: Promise<{ robot: string; device: string }>;
  /** SIGTERM, then its exit. */
  stop(): Promise<void>;
}

/**
 * Starts the device agent (a child process: its catalogue and worker are read beside its own module) paired to the
 * platform's own robot over the gateway's WebSocket; its state (credential, robot id) is kept in PF_DATA_DIR/agent,
 * so a restart reuses the pairing.
 */
export async function startEmbeddedAgent(platform: Platform, config: Config, logger: Logger): Promise<EmbeddedAgent> {
  const dir = join(config.dataDir, "agent");
  const statePath = join(dir, "state.json");
  const state = await readState(statePath);
  const args = ["--state", statePath, "--url", platform.gatewayUrl!, "--work-dir", join(dir, "work")];
  if (!state || state.closed) {
    const token = await platform.mintToken({ kind: "service", svc: "platform", caps: ["bot.robot.manage"], ttl: 60 });
    const bot = createClient(BotService, platform.transport);
    const headers = { authorization: `Bearer ${token}` };
    const robotId = state?.robot_id ?? (await bot.createRobot(ROBOT, { headers })).robot!.id;
    const issued = await bot.issuePairingCode({ id: robotId }, { headers });
    args.push("--pair", issued.pairingCode!.code);
  }
  const agent = agentProcess(import.meta.url);
  const child = spawn(process.execPath, [...agent.args, ...args], {
    cwd: agent.cwd,
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const paired = new Promise<{ robot: string; device: string }>((resolve, reject) => {
    void exited.then(() => reject(new Error("the embedded agent exited before its link opened")));
    let said = false;
    // Its log lines go on to this process's output; the first `link open` is the one line saying it is paired.
    createInterface({ input: child.stdout! }).on("line", (line) => {
      process.stdout.write(`${line}\n`);
      if (said || !line.includes('"msg":"link open"')) return;
      said = true;
      const { device, robot } = JSON.parse(line) as { device: string; robot: string };
      logger.info(
        { robot, device, state: statePath },
        `embedded device agent paired: robot ${robot}, device ${device}`,
      );
      resolve({ robot, device });
    });
  });
  paired.catch(() => undefined);
  void exited.then(() => {
    if (child.exitCode !== 0) logger.warn({ code: child.exitCode, signal: child.signalCode }, "embedded agent exited");
  });
  return {
    paired,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

/**
 * How node runs the agent: from a bundle (`npm start`, `npm run build`), the build's `agent.js` beside it, with its
 * catalogue; from source (tests, `npx tsx platform/main.ts`), `agent/main.ts` through tsx, in the repository, where
 * tsx and its tsconfig are found.
 */
function agentProcess(here: string): { args: string[]; cwd: string } {
  const path = (relative: string) => fileURLToPath(new URL(relative, here));
  if (!here.endsWith(".ts")) return { args: [path("./agent.js")], cwd: path(".") };
  return { args: ["--import", "tsx", path("../agent/main.ts")], cwd: path("..") };
}
