import type { EntityManager } from "@mikro-orm/postgresql";
import type { MediaContext } from "./context.js";
import { addUsage, insertUpload, lockUsage, reserveMore, takeUpload } from "./db/usage.js";
import { grantOf, quotaExceeded, uploadAbandoned } from "./domain/quota.js";

/**
 * One upload's hold on its namespace's quota, from before its first byte is stored to its file row: it counts the
 * file at once and reserves bytes ahead of those arriving, each reservation a short transaction on the namespace's
 * locked usage, so concurrent uploads never both pass the quota. Its file row settles it; a failure gives it back;
 * a crash leaves its upload row for the sweep (workers/sweep.ts).
 */
export class Reservation {
  private reserved = 0;

  constructor(
    private readonly ctx: MediaContext,
    readonly key: string,
    readonly app: string,
  ) {}

  /** Records the upload, its file counted: 413 media.quota_exceeded when the namespace holds its quota of files. */
  async begin(): Promise<void> {
    const { quotaBytes, quotaFiles } = this.ctx.settings;
    this.reserved = await this.ctx.transaction(async (em) => {
      const usage = await lockUsage(em, this.app);
      if (usage.files + 1 > quotaFiles) throw quotaExceeded(this.app, "files", quotaFiles);
      const ahead = grantOf(usage.bytes, quotaBytes, 0) ?? 0;
      await addUsage(em, this.app, ahead, 1);
      await insertUpload(em, { key: this.key, app: this.app, reserved: ahead, at: this.ctx.clock.now() });
      return ahead;
    });
  }

  /** Passes the file's bytes on once reserved: 413 media.quota_exceeded as soon as they would pass the quota. */
  async *reserving(body: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array, void> {
    let received = 0;
    for await (const chunk of body) {
      received += chunk.byteLength;
      if (received > this.reserved) await this.reserve(received - this.reserved);
      yield chunk;
    }
  }

  /** In the transaction writing the file row: the reservation becomes the file's size. */
  async settle(em: EntityManager, size: number): Promise<void> {
    await lockUsage(em, this.app);
    const reserved = await takeUpload(em, this.key);
    if (reserved === undefined) throw uploadAbandoned();
    await addUsage(em, this.app, size - reserved, 0);
  }

  /** Gives back what a failed upload held; if that fails too, the sweep does it once the upload looks abandoned. */
  async release(): Promise<void> {
    await this.ctx
      .transaction(async (em) => {
        await lockUsage(em, this.app);
        const reserved = await takeUpload(em, this.key);
        if (reserved !== undefined) await addUsage(em, this.app, -reserved, -1);
      })
      .catch((error: unknown) =>
        this.ctx.logger.error({ err: error, key: this.key }, "a failed upload's reservation waits for the sweep"),
      );
  }

  private async reserve(need: number): Promise<void> {
    const quota = this.ctx.settings.quotaBytes;
    this.reserved += await this.ctx.transaction(async (em) => {
      const usage = await lockUsage(em, this.app);
      const grant = grantOf(usage.bytes, quota, need);
      if (grant === undefined) throw quotaExceeded(this.app, "bytes", quota);
      if (!(await reserveMore(em, this.key, grant, this.ctx.clock.now()))) throw uploadAbandoned();
      await addUsage(em, this.app, grant, 0);
      return grant;
    });
  }
}
