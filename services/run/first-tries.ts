import { outsideCall } from "../kit/runtime/call.js";
import type { Logger } from "../kit/runtime/logger.js";

/**
 * Each job's first dispatch try, made by the instance that took its submit as soon as the submit committed (the
 * submit claimed it in its own transaction, as placement's claim would: one try counted, the next due after the
 * first backoff), instead of waiting for placement's next pass. Should this instance stop or die before bot
 * answers, placement tries again once that backoff has passed; bot's dispatch is idempotent by job id.
 */
export class FirstTries {
  private readonly running = new Set<Promise<void>>();

  constructor(private readonly logger: Logger) {}

  /** Runs the job's dispatch outside the submit's call (its deadline and trace are the submit's answer's). */
  start(jobId: string, dispatch: () => Promise<void>): void {
    const run = outsideCall(dispatch)
      .catch((error: unknown) =>
        this.logger.warn({ err: error, job: jobId }, "first dispatch try failed; placement tries again"),
      )
      .finally(() => this.running.delete(run));
    this.running.add(run);
  }

  /** Waits for the tries under way (the instance is stopping). */
  async settled(): Promise<void> {
    await Promise.all(this.running);
  }
}
