import { RunService } from "../../gen/pf/run/v1/run_pb.js";
import { implement } from "../kit/rpc/implementation.js";
import { defineService } from "../kit/service/module.js";
import { deviceEvents } from "./consumers/device-events.js";
import { usageRecords } from "./consumers/usage.js";
import { runContext } from "./context.js";
import { entities } from "./db/entities.js";
import { Migration20261221000000_run } from "./db/migrations/Migration20261221000000_run.js";
import { jobHandlers } from "./handlers/jobs.js";
import { streamHandlers } from "./handlers/stream.js";
import { placement } from "./workers/placement.js";
import { reaper } from "./workers/reaper.js";

/** The job-run service (spec part 3): jobs of a project, placed on paired devices through bot, billed per second. */
export const run = defineService({
  key: "run",
  schema: {
    entities,
    migrations: [{ name: "Migration20261221000000_run", class: Migration20261221000000_run }],
  },
  context: runContext,
  protos: [RunService],
  implementations: (ctx) => [implement(RunService, { ...jobHandlers(ctx), ...streamHandlers(ctx) })],
  // Its token's capabilities: bot's dispatch routes and billing's metering.
  holds: ["bot.job.dispatch", "billing.usage.record"],
  workers: [placement, reaper],
  consumers: [deviceEvents, usageRecords],
});
