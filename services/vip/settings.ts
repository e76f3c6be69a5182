import type { Config } from "../kit/runtime/config.js";
import { wholeSetting } from "../kit/runtime/whole-setting.js";

/** The membership service's own settings, read once from the environment (documented in README.md). */
export interface VipSettings {
  /** How long a projected entitlement counts as fresh for mode auto (PF_VIP_PROJECTION_TTL_SECONDS, default 60). */
  projectionTtlMs: number;
  /** Grace after valid_until during which a member stays a member; past it the answer is unknown (PF_VIP_ENTITLEMENT_GRACE_SECONDS, default 86400). */
  graceMs: number;
  /** Deadline of billing reads (members list, memberships, entitlement checks) before falling back (PF_VIP_BILLING_TIMEOUT_MS, default 2000). */
  billingReadTimeoutMs: number;
  /** Plans not archived (drafts and published) one owner keeps at once (PF_VIP_PLANS_PER_OWNER, default 50). */
  plansPerOwner: number;
  /** Active perks one owner keeps at once (PF_VIP_PERKS_PER_OWNER, default 200). */
  perksPerOwner: number;
}

export function vipSettings(config: Config): VipSettings {
  const whole = (name: string, fallback: number, min = 0) => wholeSetting(config.env, name, fallback, min);
  return {
    projectionTtlMs: whole("PF_VIP_PROJECTION_TTL_SECONDS", 60) * 1000,
    graceMs: whole("PF_VIP_ENTITLEMENT_GRACE_SECONDS", 86_400) * 1000,
    billingReadTimeoutMs: whole("PF_VIP_BILLING_TIMEOUT_MS", 2000, 1),
    plansPerOwner: whole("PF_VIP_PLANS_PER_OWNER", 50, 1),
    perksPerOwner: whole("PF_VIP_PERKS_PER_OWNER", 200, 1),
  };
}
