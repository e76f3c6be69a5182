import { setFlagsFromString } from "node:v8";
import { loadConfig } from "../services/kit/runtime/config.js";
import { embeddedAgentWanted, startEmbeddedAgent } from "./embedded-agent.js";
import { startPlatform } from "./host.js";
import { createLogger, processLabels } from "../services/kit/runtime/logger.js";
import { modules } from "./registry.js";

// `npm start` outside production chooses the test-mode provider, which plays the buyer and approves (unless set
// otherwise), so the whole payment flow runs on its own; billing warns loudly at start that it is on.
const local = { PF_BILLING_TEST_PROVIDER: "on", PF_BILLING_TEST_PROVIDER_AUTO: "approve" };
const config = loadConfig(loadConfig().production ? process.env : { ...local, ...process.env });
const logger = createLogger(config.logLevel, undefined, processLabels(config.services));
const platform = await startPlatform({ config, modules, logger }).catch((error: unknown) => {
  // A setting's fault (a taken port, a bad value) is one line naming it; anything else keeps its stack.
  const message = messagesOf(error);
  if (/^[A-Z][A-Z0-9_]+[:= ]/.test(message)) logger.fatal(`the platform did not start: ${message}`);
  else logger.fatal({ err: error }, `the platform did not start: ${message}`);
  process.exit(1);
});
logger.info(
  {
    gateway: platform.gatewayUrl,
    rpc: platform.rpcUrl,
    metrics: platform.metricsUrl,
    data: config.dataDir,
    // Not `services`: every line names PF_SERVICES there.
    running: [...platform.contexts.keys()],
  },
  `platform up: gateway ${platform.gatewayUrl ?? "(off)"}, RPC ${platform.rpcUrl}, metrics ${platform.metricsUrl ?? "(off)"}, data in ${config.dataDir}`,
);
// Outside production, memory before peak speed once started: V8 grows its heap by little and compacts at each full
// collection, so an idle `npm start` holds ~100 MB less (its pollers' garbage no longer doubles the heap between
// collections). Not from the process's start: the start's own allocations would take ~1.5 CPU s more.
if (!config.production) setFlagsFromString("--optimize-for-size");
// A device agent paired to the platform's own robot, so a job submitted to run has somewhere to go (README, "Run a job").
// Its failure leaves the platform up, said once (PF_EMBEDDED_AGENT=0 turns it off).
const agent = embeddedAgentWanted(config)
  ? await startEmbeddedAgent(platform, config, logger).catch((error: unknown) => {
      logger.error({ error }, "the embedded device agent did not start");
      return undefined;
    })
  : undefined;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    logger.info({ signal }, "stopping");
    void Promise.resolve(agent?.stop())
      .then(() => platform.stop())
      .then(() => process.exit(0));
  });
}

/** An error's message with its causes' (`PF_HOST_SITES_PORT: cannot serve…: listen EADDRINUSE…`). */
function messagesOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  return error.cause === undefined ? error.message : `${error.message}: ${messagesOf(error.cause)}`;
}
