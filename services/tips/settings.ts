import type { Config } from "../kit/runtime/config.js";
import { wholeSetting } from "../kit/runtime/whole-setting.js";

/** The tips service's own settings, read once from the environment (documented in README.md). */
export interface TipsSettings {
  /** How often pending checkouts are looked at again (PF_TIPS_RECOVERY_EVERY_MS, default 10000). */
  recoveryEveryMs: number;
  /** A checkout pending this long is completed by the recovery worker (PF_TIPS_RECOVERY_AFTER_MS, default 30000). */
  recoveryAfterMs: number;
  /**
   * How often an open overlay stream reads its token again (PF_TIPS_OVERLAY_RECHECK_MS,
   * default 30000): revocation ends streams at once through its event, and
   * within this long should that live event never arrive.
   */
  overlayRecheckMs: number;
  /** Open (not closed) goals a creator keeps at once (PF_TIPS_GOALS_PER_CREATOR, default 100). */
  goalsPerCreator: number;
  /** Live (not revoked) overlay tokens a creator keeps at once (PF_TIPS_OVERLAY_TOKENS_PER_CREATOR, default 50). */
  overlayTokensPerCreator: number;
  /** Overlay streams open at once on one token, per instance (PF_TIPS_STREAMS_PER_TOKEN, default 5). */
  streamsPerToken: number;
  /** Overlay streams open at once from one client address, per instance (PF_TIPS_STREAMS_PER_ADDRESS, default 20). */
  streamsPerAddress: number;
}

export function tipsSettings(config: Config): TipsSettings {
  const env = config.env;
  return {
    recoveryEveryMs: wholeSetting(env, "PF_TIPS_RECOVERY_EVERY_MS", 10_000, 100),
    recoveryAfterMs: wholeSetting(env, "PF_TIPS_RECOVERY_AFTER_MS", 30_000, 0),
    overlayRecheckMs: wholeSetting(env, "PF_TIPS_OVERLAY_RECHECK_MS", 30_000, 100),
    goalsPerCreator: wholeSetting(env, "PF_TIPS_GOALS_PER_CREATOR", 100, 1),
    overlayTokensPerCreator: wholeSetting(env, "PF_TIPS_OVERLAY_TOKENS_PER_CREATOR", 50, 1),
    streamsPerToken: wholeSetting(env, "PF_TIPS_STREAMS_PER_TOKEN", 5, 1),
    streamsPerAddress: wholeSetting(env, "PF_TIPS_STREAMS_PER_ADDRESS", 20, 1),
  };
}
