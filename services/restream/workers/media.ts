import type { ServiceContext, Worker } from "../../kit/service/module.js";
import type { RestreamContext } from "../context.js";
import { mediaLink } from "../media-link.js";
import { MediaWorker, type RunningMediaWorker } from "../media/worker.js";

/** The embedded media worker of each instance, by its context (tests and benches read its ingest URL here). */
const running = new WeakMap<ServiceContext, RunningMediaWorker>();

/** This instance's embedded media worker while it runs. */
export function embeddedWorker(ctx: ServiceContext): RunningMediaWorker | undefined {
  return running.get(ctx);
}

/**
 * The embedded media worker (services/restream/media) for as long as the instance runs, when
 * PF_RESTREAM_EMBEDDED_WORKER is on: RTMP ingest and FFmpeg outputs speaking the worker API in process. Fenced (it
 * was taken for lost, or another process registered the same worker id), it registers again for a new generation
 * after PF_RESTREAM_WORKER_LOST_MS; its sessions were interrupted and stay so.
 */
export const media: Worker<RestreamContext> = async (ctx) => {
  const { settings } = ctx;
  if (!settings.embeddedWorker) return async () => {};
  let stopping = false;
  let retry: NodeJS.Timeout | undefined;
  const start = async (): Promise<void> => {
    const worker = await new MediaWorker({
      workerId: settings.workerId,
      control: mediaLink(ctx),
      rtmpPort: settings.rtmpPort,
      bind: settings.rtmpBind,
      ffmpegPath: settings.ffmpegPath,
      heartbeatMs: settings.heartbeatMs,
      backoff: { initialMs: settings.backoffMs, maxMs: 10_000, maxFailures: settings.outputRestarts },
      playback: settings.playbackPort === "off" ? "none" : "flv",
      playbackPort: settings.playbackPort === "off" ? 0 : settings.playbackPort,
      logger: ctx.logger,
    }).start();
    running.set(ctx, worker);
    ctx.logger.info({ ingestUrl: worker.ingestUrl, generation: worker.generation }, "media worker registered");
    void worker.stopped.then((cause) => {
      if (cause !== "fenced" || stopping) return;
      running.delete(ctx);
      ctx.logger.warn({ workerId: settings.workerId }, "media worker fenced: registering again");
      retry = setTimeout(() => {
        if (!stopping)
          start().catch((error: unknown) => ctx.logger.error({ err: error }, "media worker did not start"));
      }, settings.workerLostMs);
    });
  };
  await start();
  return async () => {
    stopping = true;
    clearTimeout(retry);
    await running.get(ctx)?.stop();
    running.delete(ctx);
  };
};
