import type { Config } from "../kit/runtime/config.js";
import { wholeSetting } from "../kit/runtime/whole-setting.js";

/** The robot-control service's own settings (designed: the spec names none of these numbers). */
export interface BotSettings {
  /** How long a pairing code stays valid unused. */
  pairingCodeTtlMs: number;
  /** How often an instance marks the devices it holds links to as heard from. */
  presenceEveryMs: number;
  /** A device not heard from for this long is offline, whatever its last link said (an instance that died). */
  presenceTimeoutMs: number;
  /** How long past its ttl a job bot holds waits for its device before it ends `lost`. */
  lostGraceMs: number;
  /** How often the lost-job backstop runs. */
  lostEveryMs: number;
  /** The media base address sent in job frames; "" lets the device use its own gateway's /media. */
  mediaUrl: string;
  /** Commands one person may send one robot per minute on /control. */
  controlPerMinute: number;
  /** How long a `queue` operator's turn lasts from their last command. */
  controlTurnMs: number;
}

export function botSettings(config: Config): BotSettings {
  const mediaUrl = config.env.PF_BOT_MEDIA_URL ?? "";
  if (mediaUrl !== "" && !/^https?:\/\/[^/?#\s]+(\/[^?#\s]*)?$/.test(mediaUrl))
    throw new Error(`PF_BOT_MEDIA_URL must be an http(s) base address, got ${JSON.stringify(mediaUrl)}`);
  const presenceEveryMs = wholeSetting(config.env, "PF_BOT_PRESENCE_EVERY_MS", 30_000, 100);
  const presenceTimeoutMs = wholeSetting(config.env, "PF_BOT_PRESENCE_TIMEOUT_MS", 90_000, 1_000);
  if (presenceTimeoutMs <= presenceEveryMs)
    throw new Error("PF_BOT_PRESENCE_TIMEOUT_MS must be longer than PF_BOT_PRESENCE_EVERY_MS (the beat)");
  return {
    pairingCodeTtlMs: wholeSetting(config.env, "PF_BOT_PAIRING_CODE_TTL_MS", 600_000, 10_000),
    presenceEveryMs,
    presenceTimeoutMs,
    lostGraceMs: wholeSetting(config.env, "PF_BOT_LOST_GRACE_MS", 30_000, 0),
    lostEveryMs: wholeSetting(config.env, "PF_BOT_LOST_EVERY_MS", 5_000, 100),
    mediaUrl: mediaUrl.replace(/\/$/, ""),
    controlPerMinute: wholeSetting(config.env, "PF_BOT_CONTROL_PER_MINUTE", 120, 1),
    controlTurnMs: wholeSetting(config.env, "PF_BOT_CONTROL_TURN_MS", 60_000, 1_000),
  };
}
