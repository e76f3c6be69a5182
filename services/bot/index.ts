import { BotService } from "../../gen/pf/bot/v1/bot_pb.js";
import { BotLinkService } from "../../gen/pf/bot/v1/link_service_pb.js";
import { implement } from "../kit/rpc/implementation.js";
import { defineService } from "../kit/service/module.js";
import { botContext } from "./context.js";
import { entities } from "./db/entities.js";
import { Migration20270101000000_bot } from "./db/migrations/Migration20270101000000_bot.js";
import { auditHandlers } from "./handlers/audit.js";
import { controlHandlers } from "./handlers/control.js";
import { deviceHandlers } from "./handlers/devices.js";
import { estopHandlers } from "./handlers/estop.js";
import { jobHandlers } from "./handlers/jobs.js";
import { linkHandlers } from "./handlers/link.js";
import { pairingHandlers } from "./handlers/pairing.js";
import { robotHandlers } from "./handlers/robots.js";
import { robotRoles } from "./roles.js";
import { links } from "./workers/links.js";
import { lostJobsBackstop } from "./workers/lost.js";

/**
 * The robot-control service (spec part 3): robots, pairing and devices, the command audit, the e-stop latch, job
 * dispatch to paired devices for the job-run service, the device link and the operator channel.
 */
export const bot = defineService({
  key: "bot",
  schema: {
    entities,
    migrations: [{ name: "Migration20270101000000_bot", class: Migration20270101000000_bot }],
  },
  context: botContext,
  protos: [BotService, BotLinkService],
  implementations(ctx) {
    const pairing = pairingHandlers(ctx);
    return [
      implement(BotService, {
        ...robotHandlers(ctx),
        ...deviceHandlers(ctx),
        ...estopHandlers(ctx),
        ...auditHandlers(ctx),
        ...jobHandlers(ctx),
        issuePairingCode: pairing.issuePairingCode,
      }),
      implement(BotLinkService, { pairDevice: pairing.pairDevice, ...linkHandlers(ctx), ...controlHandlers(ctx) }),
    ];
  },
  // A person's role on a robot (owner, operator, queue, viewer), declared on the manage, read and e-stop routes.
  relations: robotRoles,
  workers: [links, lostJobsBackstop],
});
