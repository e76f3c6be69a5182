import { mkdir, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { reserve } from "../../services/kit/quotas/quotas.js";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import type { MediaContext } from "../../services/media/context.js";
import { sweepAbandoned } from "../../services/media/workers/sweep.js";
import { usePlatform } from "../support/platform.js";
import { blobFiles, namespaceUsage, openUploads } from "./support.js";

const HOUR = 3_600_000;
const clock = new ManualClock(new Date());
const t = usePlatform({ services: ["media"], clock, env: { PF_MEDIA_SWEEP_AFTER_MS: String(2 * HOUR) } });
const media = () => t.platform.contexts.get("media") as MediaContext;

/** An upload under way as the handler holds it (its file and 100 bytes), last touched at `at`, its blob stored when `stored`. */
async function uploadUnderWay(key: string, at: Date, stored: boolean) {
  const ctx = media();
  const now = clock.now();
  clock.set(at);
  await ctx.transaction(async (em) => {
    await reserve(ctx, ctx.quotas.files, "swept", 1, { em, holder: key });
    await reserve(ctx, ctx.quotas.bytes, "swept", 100, { em, holder: key });
  });
  clock.set(now);
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
    expect(await openUploads(ctx)).toEqual(["liveCCCCCCCCCCCCCCCCCCCC"]);
    expect(await namespaceUsage(ctx, "swept")).toEqual({ bytes: 100, files: 1 });
  });
});
