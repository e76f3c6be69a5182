import type { Worker } from "node:worker_threads";
import { problem } from "../handler/problem.js";
import { moduleWorker } from "../runtime/module-worker.js";

/** What a rendering worker makes of a source: sanitised HTML, plain text, or an excerpt of `maxChars`. */
export type RenderKind = "html" | "text" | "excerpt";

export interface RenderJob {
  id: number;
  kind: RenderKind;
  source: string;
  maxChars?: number;
}

export interface RenderAnswer {
  id: number;
  text: string;
}

export interface PoolOptions {
  /** Worker threads. */
  workers: number;
  /** How long one job may take on its worker before the worker is terminated. */
  budgetMs: number;
  /** Jobs waiting for a worker at most; one more is refused (503 rendering.busy). */
  queue: number;
}

interface Waiting {
  job: RenderJob;
  done: (text: string | undefined) => void;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  busy?: { waiting: Waiting; timer: NodeJS.Timeout };
}

/** Each worker's V8 heap at most, so a render that swells is ended by its worker, not the process. */
const WORKER_HEAP_MB = 256;

/**
 * Worker threads that render Markdown off the event loop every service shares (README "Rich text"). A job waits
 * in a bounded queue for an idle worker; a job still running after its time budget has its worker terminated
 * (a new one takes the slot) and answers `undefined`, as does a worker that fails: the caller shows its fallback.
 */
export class RenderPool {
  private readonly slots: (Slot | undefined)[];
  private readonly waiting: Waiting[] = [];
  private nextId = 1;
  /** Jobs answered by a worker, and jobs ended past their budget (or by a failed worker). */
  readonly counts = { rendered: 0, overBudget: 0 };

  constructor(private readonly options: PoolOptions) {
    this.slots = Array.from({ length: options.workers }, () => undefined);
  }

  /** The worker's answer, or `undefined` when the job overran its budget or its worker failed. */
  run(kind: RenderKind, source: string, maxChars?: number): Promise<string | undefined> {
    if (this.waiting.length >= this.options.queue)
      return Promise.reject(problem(503, "rendering.busy", "Too much text is being rendered; try again shortly."));
    return new Promise((done) => {
      this.waiting.push({ job: { id: this.nextId++, kind, source, maxChars }, done });
      this.dispatch();
    });
  }

  /** Ends every worker (a process or test that is done with rendering); jobs in flight answer `undefined`. */
  async close(): Promise<void> {
    for (const waiting of this.waiting.splice(0)) waiting.done(undefined);
    await Promise.all(this.slots.flatMap((slot) => (slot ? [this.end(slot)] : [])));
  }

  private dispatch(): void {
    for (let index = 0; index < this.slots.length && this.waiting.length > 0; index++) {
      const slot = (this.slots[index] ??= this.start(index));
      if (!slot.ready || slot.busy) continue;
      const waiting = this.waiting.shift()!;
      const timer = setTimeout(() => {
        this.counts.overBudget++;
        this.finish(slot, undefined);
        void this.end(slot);
      }, this.options.budgetMs);
      slot.busy = { waiting, timer };
      slot.worker.ref();
      slot.worker.postMessage(waiting.job);
    }
    // An idle worker never keeps the process alive; one starting for a job or rendering does.
    for (const slot of this.slots) if (slot?.ready && !slot.busy) slot.worker.unref();
  }

  private start(index: number): Slot {
    const worker = spawn();
    const slot: Slot = { worker, ready: false };
    worker.on("message", (message: RenderAnswer | "ready") => {
      if (message === "ready") slot.ready = true;
      else if (slot.busy?.waiting.job.id === message.id) {
        this.counts.rendered++;
        this.finish(slot, message.text);
      }
      this.dispatch();
    });
    worker.on("error", (error) => {
      process.emitWarning(`a Markdown rendering worker failed: ${error.message}`);
      if (slot.busy) this.counts.overBudget++;
      this.finish(slot, undefined);
    });
    worker.on("exit", () => {
      this.finish(slot, undefined);
      if (this.slots[index] === slot) this.slots[index] = undefined;
      // A worker that could not start answers what waits with the fallback, rather than start again at once.
      if (slot.ready) this.dispatch();
      else for (const waiting of this.waiting.splice(0)) waiting.done(undefined);
    });
    return slot;
  }

  private finish(slot: Slot, text: string | undefined): void {
    if (!slot.busy) return;
    clearTimeout(slot.busy.timer);
    const { done } = slot.busy.waiting;
    slot.busy = undefined;
    done(text);
  }

  private async end(slot: Slot): Promise<void> {
    const index = this.slots.indexOf(slot);
    if (index >= 0) this.slots[index] = undefined;
    await slot.worker.terminate();
    this.dispatch();
  }
}

/** A rendering worker (render-worker.ts), saying "ready" once it can take jobs, so a job's budget never counts its start. */
function spawn(): Worker {
  return moduleWorker(import.meta.url, "render-worker", {
    resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
    ready: true,
  });
}
