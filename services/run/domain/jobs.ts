import { ExitReason } from "../../../gen/pf/bot/v1/jobs_pb.js";

/** Run's word for each of bot's exit reasons (the spec's "job exit says ttl or limit"). */
const REASONS: Record<ExitReason, string> = {
  [ExitReason.UNSPECIFIED]: "failed",
  [ExitReason.COMPLETED]: "completed",
  [ExitReason.FAILED]: "failed",
  [ExitReason.CANCELED]: "canceled",
  [ExitReason.TTL]: "ttl",
  [ExitReason.LIMIT]: "limit",
  [ExitReason.INPUT_DIGEST_MISMATCH]: "input_digest_mismatch",
  [ExitReason.REFUSED]: "refused",
  [ExitReason.LOST]: "lost",
  [ExitReason.UNPLACEABLE]: "unplaceable",
};

/** The word run's JobExit says for one of bot's exit reasons. */
export function exitReasonName(reason: ExitReason): string {
  return REASONS[reason] ?? "failed";
}

/** Reasons whose end no device reported: nothing ran that anyone can show, so nothing is billed. */
const UNREPORTED = new Set(["lost", "unplaceable"]);

/**
 * Wall-clock seconds billed for a job: the device's start to its exit, in whole seconds rounded up, clamped to the
 * job's ttl (itself rounded up); 0 for a job that never started or whose end no device reported.
 */
export function usageSeconds(run: { startedAt?: Date; endedAt?: Date; ttlMs: number; reason: string }): number {
  if (!run.startedAt || !run.endedAt || UNREPORTED.has(run.reason)) return 0;
  const ms = Math.max(0, run.endedAt.getTime() - run.startedAt.getTime());
  return Math.min(Math.ceil(ms / 1000), Math.ceil(run.ttlMs / 1000));
}

/** The first wait between dispatch tries; it doubles with each try up to the setting's maximum. */
const FIRST_BACKOFF_MS = 250;

/** How long after its `attempts`-th dispatch try a queued job is tried again. */
export function placementBackoffMs(attempts: number, maxMs: number): number {
  return Math.min(maxMs, FIRST_BACKOFF_MS * 2 ** Math.min(Math.max(attempts - 1, 0), 20));
}

/**
 * Bot's refusals of a dispatch that may pass later: no device advertises the class now, or the robot's e-stop is
 * latched. The job stays queued and is tried again until its ttl has passed since it was submitted (then it ends
 * `unplaceable`); any other refusal ends it `refused`, with bot's code.
 */
const RETRIED = new Set(["bot.class_unadvertised", "bot.estop_latched"]);

/** Whether bot's refusal of a dispatch is one to try again (see RETRIED). */
export function dispatchRetried(code: string): boolean {
  return RETRIED.has(code);
}
