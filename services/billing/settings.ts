import type { Config } from "../kit/runtime/config.js";
import { wholeSetting } from "../kit/runtime/whole-setting.js";
import { defaultCatalogue, parseCatalogue, type Catalogue } from "./domain/catalogue.js";

/** Billing's own settings, read once from the environment (documented in README.md). */
export interface BillingSettings {
  /** Smallest cashout, in minor units of its currency (PF_BILLING_CASHOUT_MINIMUM, default 1000). */
  cashoutMinimum: bigint;
  /** How long a cashout stays in escrow before it may be approved (PF_BILLING_ESCROW_HOURS, default 168: 7 days). */
  escrowMs: number;
  /** Length of one subscription period (PF_BILLING_PERIOD_DAYS, default 30). */
  periodMs: number;
  /** How often the renewal sweep runs (PF_BILLING_SWEEP_EVERY_MS, default 60000). */
  sweepEveryMs: number;
  /** The payment provider intents use when they name none (PF_BILLING_PROVIDER, default test). */
  defaultProvider: string;
  /**
   * PF_BILLING_TEST_PROVIDER=on: the operator chose the test-mode provider, which
   * settles whatever its own webhooks say (refused in production); unset or `off`, it is not there.
   */
  testProvider: boolean;
  /** Where test-mode checkout URLs point (PF_BILLING_TEST_CHECKOUT_URL). */
  testCheckoutUrl: string;
  /**
   * PF_BILLING_TEST_PROVIDER_AUTO=approve: the test-mode provider approves each new order
   * itself and delivers the signed order.approved webhook to billing (for `npm start`
   * without a test driver); unset, orders wait for a test to approve or decline them.
   */
  testProviderAuto: "" | "approve";
  /** Credit packs, credit rates and subscription tiers (PF_BILLING_CATALOGUE as JSON, else the defaults). */
  catalogue: Catalogue;
  /**
   * The most transfers one database call posts together (PF_BILLING_BATCH, default 50): transfers that
   * arrive while a batch is being posted wait for the next one. 0 posts each transfer alone.
   */
  batch: number;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

export function billingSettings(config: Config): BillingSettings {
  const env = config.env;
  const whole = (name: string, fallback: number) => wholeSetting(env, name, fallback);
  const choice = <T extends string>(name: string, allowed: readonly T[]): T => {
    const raw = env[name] ?? "";
    if (!allowed.includes(raw as T))
      throw new Error(
        `${name} must be one of ${allowed.map((a) => JSON.stringify(a)).join(", ")}, got ${JSON.stringify(raw)}`,
      );
    return raw as T;
  };
  const testProvider = choice("PF_BILLING_TEST_PROVIDER", ["", "on", "off"] as const) === "on";
  if (testProvider && config.production) {
    throw new Error(
      "PF_BILLING_TEST_PROVIDER=on is refused with PF_ENV=production: test-mode payments settle without money.",
    );
  }
  return {
    cashoutMinimum: BigInt(whole("PF_BILLING_CASHOUT_MINIMUM", 1000)),
    escrowMs: whole("PF_BILLING_ESCROW_HOURS", 168) * HOUR,
    periodMs: whole("PF_BILLING_PERIOD_DAYS", 30) * DAY,
    sweepEveryMs: whole("PF_BILLING_SWEEP_EVERY_MS", 60_000),
    defaultProvider: env.PF_BILLING_PROVIDER || "test",
    testProvider,
    // Test mode serves no checkout page: the buyer is played by tests, or by auto mode.
    testCheckoutUrl: env.PF_BILLING_TEST_CHECKOUT_URL || "https://checkout.test-provider.invalid/pay",
    testProviderAuto: choice("PF_BILLING_TEST_PROVIDER_AUTO", ["", "approve"] as const),
    catalogue: env.PF_BILLING_CATALOGUE ? parseCatalogue(env.PF_BILLING_CATALOGUE) : defaultCatalogue,
    batch: whole("PF_BILLING_BATCH", 50),
  };
}
