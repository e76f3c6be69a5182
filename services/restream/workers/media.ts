import { setTimeout as wait } from "node:timers/promises";
import type { Worker } from "../../kit/service/module.js";
import type { RestreamContext } from "../context.js";
import { mediaLink } from "../media-link.js";
import type { Backoff } from "../media/outputs.js";
import { MediaWorker, type RunningMediaWorker } from "../media/worker.js";
import type { RestreamSettings } from "../settings.js";

/** The longest wait between two tries to register again. */
const REGISTER_MAX_MS = 60_000;

/** Restarts of an output: PF_RESTREAM_OUTPUT_RESTARTS restarts in a row, so the exit after the last one fails it. */
export function outputBackoff(settings: RestreamSettings): Backoff {
  return { initialMs: settings.backoffMs, maxMs: 10_000, maxFailures: settings.outputRestarts + 1 };
}

/**
 * The embedded media worker (services/restream/media) for as long as the instance runs, when
 * PF_RESTREAM_EMBEDDED_WORKER is on: RTMP ingest and FFmpeg outputs speaking the worker API in process. Fenced (it
 * was taken for lost, or another process registered the same worker id), it registers again for a new generation
 * after PF_RESTREAM_WORKER_LOST_MS, trying again (the wait doubling up to a minute) until it runs or the instance
 * stops; its sessions were interrupted and stay so.
 */
export const media: Worker<RestreamContext> = async (ctx) => {
  const { settings } = ctx;
  if (!settings.embeddedWorker) return async () => {};
  const stopping = new AbortController();
  let current: RunningMediaWorker | undefined;
  let again: Promise<void> = Promise.resolve();

  const start = async (): Promise<void> => {
    const worker = await new MediaWorker({
      workerId: settings.workerId,
      control: mediaLink(ctx),
      rtmpPort: settings.rtmpPort,
      bind: settings.rtmpBind,
      ffmpegPath: settings.ffmpegPath,
      heartbeatMs: settings.heartbeatMs,
      backoff: outputBackoff(settings),
      playback: settings.playbackPort === "off" ? "none" : "flv",
      playbackPort: settings.playbackPort === "off" ? 0 : settings.playbackPort,
      logger: ctx.logger,
    }).start();
    // A stop that came while it registered: it does not outlive the instance.
    if (stopping.signal.aborted) return worker.stop();
    current = worker;
    ctx.logger.info({ ingestUrl: worker.ingestUrl, generation: worker.generation }, "media worker registered");
    void worker.stopped.then((cause) => {
      if (current === worker) current = undefined;
      if (cause !== "fenced" || stopping.signal.aborted) return;
      ctx.logger.warn({ workerId: settings.workerId }, "media worker fenced: registering again");
      again = registerAgain();
    });
  };

  const registerAgain = async (): Promise<void> => {
    for (let delay = settings.workerLostMs; !stopping.signal.aborted; delay = Math.min(REGISTER_MAX_MS, delay * 2)) {
      await wait(delay, undefined, { signal: stopping.signal }).catch(() => undefined);
      if (stopping.signal.aborted) return;
      try {
        return await start();
      } catch (error) {
        ctx.logger.error({ err: error }, "media worker did not start: trying again");
      }
    }
  };

  await start();
  return async () => {
    stopping.abort();
    await again;
    await current?.stop();
    current = undefined;
  };
};
