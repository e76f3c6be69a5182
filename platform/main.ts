import { loadConfig } from "../services/kit/runtime/config.js";
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
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    logger.info({ signal }, "stopping");
    void platform.stop().then(() => process.exit(0));
  });
}
