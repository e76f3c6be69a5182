import { RestreamService } from "../../gen/pf/restream/v1/restream_pb.js";
import { RestreamWorkerService } from "../../gen/pf/restream/v1/worker_pb.js";
import { implement } from "../kit/rpc/implementation.js";
import { defineService } from "../kit/service/module.js";
import { restreamContext } from "./context.js";
import { entities } from "./db/entities.js";
import { Migration20270401000000_restream } from "./db/migrations/Migration20270401000000_restream.js";
import { destinationHandlers } from "./handlers/destinations.js";
import { keyHandlers } from "./handlers/keys.js";
import { outputHandlers } from "./handlers/outputs.js";
import { sessionHandlers } from "./handlers/sessions.js";
import { streamHandlers } from "./handlers/streams.js";
import { workerOutputHandlers } from "./handlers/worker-outputs.js";
import { workerSessionHandlers } from "./handlers/worker-sessions.js";
import { media } from "./workers/media.js";
import { liveness } from "./workers/liveness.js";

/**
 * The restream service (spec part 3): the control plane of a streamer's broadcast. Stream definitions with an ingest
 * key shown once, destinations with sealed stream keys, sessions and outputs reported by media workers with
 * generations, key rotation with a grace period; the embedded media worker (RTMP ingest, FFmpeg outputs) runs in
 * process and speaks the same worker API a real media server's adapter would.
 */
export const restream = defineService({
  key: "restream",
  schema: {
    entities,
    migrations: [{ name: "Migration20270401000000_restream", class: Migration20270401000000_restream }],
  },
  context: restreamContext,
  protos: [RestreamService, RestreamWorkerService],
  implementations(ctx) {
    return [
      implement(RestreamService, {
        ...streamHandlers(ctx),
        ...keyHandlers(ctx),
        ...destinationHandlers(ctx),
        ...outputHandlers(ctx),
        ...sessionHandlers(ctx),
      }),
      implement(RestreamWorkerService, {
        ...workerSessionHandlers(ctx),
        ...workerOutputHandlers(ctx),
      }),
    ];
  },
  // The embedded worker calls the worker API with restream's own token.
  holds: ["restream.worker.report"],
  workers: [media, liveness],
});
