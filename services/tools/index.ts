import { ToolsService } from "../../gen/pf/tools/v1/tools_pb.js";
import { implement } from "../kit/rpc/implementation.js";
import { defineService } from "../kit/service/module.js";
import { toolsContext } from "./context.js";
import { entities } from "./db/entities.js";
import { Migration20270201000000_tools } from "./db/migrations/Migration20270201000000_tools.js";
import { jobHandlers } from "./handlers/jobs.js";
import { registryHandlers } from "./handlers/registry.js";
import { runHandlers } from "./handlers/run.js";
import { toolsRelations } from "./roles.js";
import { executors } from "./workers/executors.js";
import { reaper } from "./workers/reaper.js";
import { sweep } from "./workers/sweep.js";

/**
 * The tools service (spec part 3): a registry of tool descriptors open to anyone, one run API answering inline or
 * with a job, file jobs (sharp, FFmpeg, PDF/DOCX/Markdown libraries) with server-sent progress, references that
 * keep results alive, and network probes for partner apps and services that never reach inside.
 */
export const tools = defineService({
  key: "tools",
  schema: {
    entities,
    migrations: [{ name: "Migration20270201000000_tools", class: Migration20270201000000_tools }],
  },
  context: toolsContext,
  protos: [ToolsService],
  implementations(ctx) {
    return [implement(ToolsService, { ...registryHandlers(ctx), ...runHandlers(ctx), ...jobHandlers(ctx) })];
  },
  // The auth class of the tool a run names, from its descriptor.
  relations: toolsRelations,
  // Its token's capability: media's objects, a JSON job's input files by key.
  holds: ["media.object.read"],
  workers: [executors, reaper, sweep],
});
