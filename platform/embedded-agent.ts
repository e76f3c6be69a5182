import { join } from "node:path";
import { createInterface } from "node:readline";
import type { Worker } from "node:worker_threads";
import { createClient } from "@connectrpc/connect";
import { readState } from "../agent/state.js";
import { BotService } from "../gen/pf/bot/v1/bot_pb.js";
import type { Logger } from "../services/kit/runtime/logger.js";
import { moduleWorker } from "../services/kit/runtime/module-worker.js";
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
  /** Its stop (as SIGTERM stops the agent's command), then its end. */
  stop(): Promise<void>;
}

/**
 * Starts the device agent, paired to the platform's own robot over the gateway's WebSocket; its state (credential,
 * robot id) is kept in PF_DATA_DIR/agent, so a restart reuses the pairing. It runs its own module (its catalogue and
 * worker read beside it) in a worker thread of this process: as a process of its own it held ~40 MB more (a second
 * Node), with the same isolation from the platform (its own heap and event loop; its failure ends only its thread).
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
  const worker = agentWorker(args);
  const exited = new Promise<number>((resolve) => worker.once("exit", resolve));
  const paired = new Promise<{ robot: string; device: string }>((resolve, reject) => {
    void exited.then(() => reject(new Error("the embedded agent exited before its link opened")));
    let said = false;
    // Its log lines go on to this process's output; the first `link open` is the one line saying it is paired.
    createInterface({ input: worker.stdout }).on("line", (line) => {
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
  // An error it did not catch ends its thread (said here), not the platform.
  worker.on("error", (error) => logger.error({ err: error }, "the embedded agent failed"));
  void exited.then((code) => {
    if (code !== 0) logger.warn({ code }, "embedded agent exited");
  });
  return {
    paired,
    stop: async () => {
      // Its command's SIGTERM (agent/main.ts); gone already, the message goes nowhere.
      worker.postMessage("stop");
      await exited;
    },
  };
}

/**
 * The agent's command in a worker thread, `argv` its arguments: from a bundle (`npm start`, `npm run build`), the
 * build's `agent.js` beside it, with its catalogue; from source (tests, `npx tsx platform/main.ts`), `agent/main.ts`
 * through tsx. Its log lines are read from its stdout.
 */
function agentWorker(argv: string[]): Worker {
  const options = { argv, stdout: true };
  if (new URL(import.meta.url).pathname.endsWith(".ts"))
    return moduleWorker(new URL("../agent/main.ts", import.meta.url).href, "main", options);
  return moduleWorker(import.meta.url, "agent", options);
}
