import { mkdir, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import type { MediaContext } from "../../services/media/context.js";
import { addUsage, insertUpload, lockUsage } from "../../services/media/db/usage.js";
import { sweepAbandoned } from "../../services/media/workers/sweep.js";
import { usePlatform } from "../support/platform.js";
import { blobFiles } from "./support.js";

const HOUR = 3_600_000;
const t = usePlatform({ services: ["media"], env: { PF_MEDIA_SWEEP_AFTER_MS: String(2 * HOUR) } });
const media = () => t.platform.contexts.get("media") as MediaContext;

/** An upload under way as the handler records it, last touched at `at`, its blob already stored when `stored`. */
async function uploadUnderWay(key: string, at: Date, stored: boolean) {
  const ctx = media();
  await ctx.transaction(async (em) => {
    await lockUsage(em, "swept");
    await addUsage(em, "swept", 100, 1);
    await insertUpload(em, { key, app: "swept", reserved: 100, at });
  });
  if (stored) await ctx.blobs.put(key, Readable.from([Buffer.alloc(100, 1)]), "x/y");
}

describe("the sweep of abandoned uploads", () => {
  it("removes the blobs of uploads untouched past PF_MEDIA_SWEEP_AFTER_MS, their rows and reservations, and stale temporary files", async () => {
    const ctx = media();
    const now = ctx.clock.now();
    await uploadUnderWay("abandonedAAAAAAAAAAAAAAA", new Date(now.getTime() - 3 * HOUR), true);
    await uploadUnderWay("abandonedBBBBBBBBBBBBBBB", new Date(now.getTime() - 3 * HOUR), false);
    await uploadUnderWay("liveCCCCCCCCCCCCCCCCCCCC", now, true);
    const temporary = join(ctx.config.dataDir, "blobs", ".tmp");
    await mkdir(temporary, { recursive: true });
    await writeFile(join(temporary, "stale"), "cut off by a crash");
    await utimes(join(temporary, "stale"), new Date(now.getTime() - 3 * HOUR), new Date(now.getTime() - 3 * HOUR));
    await writeFile(join(temporary, "fresh"), "a put under way");

    await sweepAbandoned(ctx);

    const left = (await blobFiles(t)).map((path) => path.slice(path.indexOf("/blobs/") + "/blobs/".length)).sort();
    expect(left).toEqual([".tmp/fresh", "media/liveCCCCCCCCCCCCCCCCCCCC"]);
    const connection = ctx.orm.em.getConnection();
    expect((await connection.execute(`select key from media.uploads`)).map((row) => row.key)).toEqual([
      "liveCCCCCCCCCCCCCCCCCCCC",
    ]);
    const [usage] = await connection.execute(`select bytes, files from media.app_usage where app = 'swept'`);
    expect({ bytes: Number(usage.bytes), files: Number(usage.files) }).toEqual({ bytes: 100, files: 1 });
  });
});
