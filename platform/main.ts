import { loadConfig } from "../services/kit/runtime/config.js";
import { embeddedAgentWanted, startEmbeddedAgent } from "./embedded-agent.js";
import { startPlatform } from "./host.js";
import { createLogger } from "../services/kit/runtime/logger.js";
import { modules } from "./registry.js";

// `npm start` outside production chooses the test-mode provider, which plays the buyer and approves (unless set
// otherwise), so the whole payment flow runs on its own; billing warns loudly at start that it is on.
const local = { PF_BILLING_TEST_PROVIDER: "on", PF_BILLING_TEST_PROVIDER_AUTO: "approve" };
const config = loadConfig(loadConfig().production ? process.env : { ...local, ...process.env });
const logger = createLogger(config.logLevel);
const platform = await startPlatform({ config, modules, logger });
logger.info(
  {
    gateway: platform.gatewayUrl,
    rpc: platform.rpcUrl,
    metrics: platform.metricsUrl,
    data: config.dataDir,
    services: [...platform.contexts.keys()],
  },
  `platform up: gateway ${platform.gatewayUrl ?? "(off)"}, RPC ${platform.rpcUrl}, metrics ${platform.metricsUrl ?? "(off)"}, data in ${config.dataDir}`,
);
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
