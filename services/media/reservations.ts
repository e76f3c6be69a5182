import type { EntityManager } from "@mikro-orm/postgresql";
import { reserve, type Reservation } from "../kit/quotas/quotas.js";
import type { MediaContext } from "./context.js";
import { RESERVE_STEP } from "./domain/quota.js";

/**
 * One upload's hold on its namespace's quotas (the kit's quotas, held for the upload's key), from before its first
 * byte is stored to its file row: it counts the file at once and reserves bytes ahead of those arriving, each
 * reservation a short transaction on the namespace's locked counter, so concurrent uploads never both pass the
 * quota. Its file row settles it; a failure gives it back; a crash leaves it for the sweep (workers/sweep.ts).
 */
export class UploadReservation {
  private held?: { files: Reservation; bytes: Reservation };

  constructor(
    private readonly ctx: MediaContext,
    readonly key: string,
    readonly app: string,
  ) {}

  /** Counts the file and reserves bytes ahead: 413 media.quota_exceeded when the namespace holds its files. */
  async begin(): Promise<void> {
    const { quotas } = this.ctx;
    const holder = this.key;
    this.held = await this.ctx.transaction(async (em) => ({
      files: await reserve(this.ctx, quotas.files, this.app, 1, { em, holder }),
      bytes: await reserve(this.ctx, quotas.bytes, this.app, 0, { em, holder, ahead: RESERVE_STEP }),
    }));
  }

  /**
   * Reserves bytes up to `received` (RESERVE_STEP ahead) before they are stored: 413 media.quota_exceeded as soon as
   * they would pass the quota. Undefined when what it holds covers them (most chunks): nothing to wait for.
   */
  cover(received: number): Promise<void> | undefined {
    const { bytes } = this.begun();
    const need = received - bytes.units;
    return need > 0 ? bytes.more(need, { ahead: Math.max(need, RESERVE_STEP) }) : undefined;
  }

  /** In the transaction writing the file row: the reservations become the file and its size. */
  async settle(em: EntityManager, size: number): Promise<void> {
    const { files, bytes } = this.begun();
    await files.settle(1, em);
    await bytes.settle(size, em);
  }

  /** Gives back what a failed upload held; if that fails too, the sweep does it once the upload looks abandoned. */
  async release(): Promise<void> {
    const held = this.held;
    if (!held) return;
    await this.ctx
      .transaction(async (em) => {
        await held.files.release(em);
        await held.bytes.release(em);
      })
      .catch((error: unknown) =>
        this.ctx.logger.error({ err: error, key: this.key }, "a failed upload's reservation waits for the sweep"),
      );
  }

  private begun(): { files: Reservation; bytes: Reservation } {
    if (!this.held) throw new Error("an upload's reservation is used before it began");
    return this.held;
  }
}
