import { SourcesService } from "../../gen/pf/sources/v1/sources_pb.js";
import { defineService } from "../kit/service/module.js";
import { implement } from "../kit/rpc/implementation.js";
import { sourcesContext } from "./context.js";
import { entities } from "./db/entities.js";
import { Migration20261203000200_sources } from "./db/migrations/Migration20261203000200_sources.js";
import { Migration20261230000000_sources_entries_skipped } from "./db/migrations/Migration20261230000000_sources_entries_skipped.js";
import { itemHandlers } from "./handlers/items.js";
import { runHandlers } from "./handlers/runs.js";
import { sourceHandlers } from "./handlers/sources.js";
import { executor } from "./workers/executor.js";
import { reaper } from "./workers/reaper.js";
import { scheduler } from "./workers/scheduler.js";

/** The sources service (spec part 2): registered sources, fetch runs, items with provenance, health. */
export const sources = defineService({
  key: "sources",
  schema: {
    entities,
    migrations: [
      { name: "Migration20261203000200_sources", class: Migration20261203000200_sources },
      {
        name: "Migration20261230000000_sources_entries_skipped",
        class: Migration20261230000000_sources_entries_skipped,
      },
    ],
  },
  context: sourcesContext,
  protos: [SourcesService],
  implementations(ctx) {
    return [implement(SourcesService, { ...sourceHandlers(ctx), ...itemHandlers(ctx), ...runHandlers(ctx) })];
  },
  workers: [scheduler, executor, reaper],
});
