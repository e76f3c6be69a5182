import type { Client } from "@connectrpc/connect";
import { BillingUsageService } from "../../gen/pf/billing/v1/usage_pb.js";
import { BotService } from "../../gen/pf/bot/v1/bot_pb.js";
import type { ServiceContext } from "../kit/service/module.js";
import { runSettings, type RunSettings } from "./settings.js";
import { FirstTries } from "./first-tries.js";
import { JobWatchers } from "./watchers.js";

/** Built once per job-run instance by the host: the service context, run's settings, its clients and stream wakes. */
export interface RunContext extends ServiceContext {
  settings: RunSettings;
  /** Bot, called with run's own token (bot.job.dispatch): dispatch, read and cancel of dispatched jobs. */
  bot: Client<typeof BotService>;
  /** Billing's metering, called with run's own token (billing.usage.record). */
  billing: Client<typeof BillingUsageService>;
  /** What wakes this instance's open job streams. */
  watchers: JobWatchers;
  /** The first dispatch tries of the jobs submitted here. */
  firstTries: FirstTries;
}

export function runContext(base: ServiceContext): RunContext {
  return {
    ...base,
    settings: runSettings(base.config),
    bot: base.client(BotService),
    billing: base.client(BillingUsageService),
    watchers: new JobWatchers(base.bus, base.logger),
    firstTries: new FirstTries(base.logger),
  };
}
