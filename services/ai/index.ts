import { AiService } from "../../gen/pf/ai/v1/ai_pb.js";
import { implement } from "../kit/rpc/implementation.js";
import { defineService } from "../kit/service/module.js";
import { aiContext } from "./context.js";
import { entities } from "./db/entities.js";
import { Migration20270301000000_ai } from "./db/migrations/Migration20270301000000_ai.js";
import { cacheHandlers } from "./handlers/cache.js";
import { chatStreamHandlers } from "./handlers/chat-stream.js";
import { definitionHandlers } from "./handlers/definitions.js";
import { modelHandlers } from "./handlers/models.js";
import { providerHandlers } from "./handlers/providers.js";
import { quotaHandlers } from "./handlers/quotas.js";
import { runControlHandlers } from "./handlers/run-control.js";
import { runHandlers } from "./handlers/runs.js";
import { usageHandlers } from "./handlers/usage.js";
import { reaper } from "./workers/reaper.js";
import { sweep } from "./workers/sweep.js";

/**
 * The AI service (spec part 3): the platform's one door to models. Workflow runs and direct operations behind
 * quotas, circuit breakers and a cache shared by every instance; providers and models whose secrets are only
 * environment references; prompt templates, workflow definitions and routing profiles as immutable, audited
 * versions; usage reads.
 */
export const ai = defineService({
  key: "ai",
  schema: {
    entities,
    migrations: [{ name: "Migration20270301000000_ai", class: Migration20270301000000_ai }],
  },
  context: aiContext,
  protos: [AiService],
  implementations(ctx) {
    return [
      implement(AiService, {
        ...runHandlers(ctx),
        ...chatStreamHandlers(ctx),
        ...runControlHandlers(ctx),
        ...usageHandlers(ctx),
        ...providerHandlers(ctx),
        ...modelHandlers(ctx),
        ...quotaHandlers(ctx),
        ...cacheHandlers(ctx),
        ...definitionHandlers(ctx),
      }),
    ];
  },
  workers: [sweep, reaper],
});
