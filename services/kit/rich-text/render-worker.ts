import { parentPort } from "node:worker_threads";
import { excerpt, plainText, renderMarkdown } from "./markdown.js";
import type { RenderAnswer, RenderJob } from "./pool.js";

/**
 * A rendering worker thread (README "Rich text"): Markdown is parsed here, never on the event loop every
 * service shares. One job at a time; the pool terminates the thread when a job overruns its time budget.
 */
parentPort!.on("message", (job: RenderJob) => {
  const text =
    job.kind === "html"
      ? renderMarkdown(job.source)
      : job.kind === "text"
        ? plainText(job.source)
        : excerpt(job.source, job.maxChars ?? 0);
  parentPort!.postMessage({ id: job.id, text } satisfies RenderAnswer);
});
