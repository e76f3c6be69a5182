import type { Worker } from "../../kit/service/module.js";
import { outsideCall } from "../../kit/runtime/call.js";
import type { ToolDescriptor } from "../catalogue/descriptor.js";
import type { ToolsContext } from "../context.js";
import { claimQueuedJob } from "../db/job-runs.js";
import { JOB_TOOLS } from "../families/index.js";
import { runAttempt, type AttemptRunner } from "./attempt.js";

/** How often an idle executor looks for jobs queued by another instance (this instance's wake it at once). */
const POLL_MS = 1_000;

/** The job tools this instance runs: available, implemented here, and live (their family's library or binary here). */
export function executedTools(ctx: ToolsContext): ToolDescriptor[] {
  return ctx.catalogue.tools.filter(
    (tool) =>
      tool.catalogue === "available" &&
      tool.execution === "job" &&
      JOB_TOOLS[tool.id] !== undefined &&
      ctx.live.of(tool).status === "live",
  );
}

/**
 * The executors: per family of the job tools this instance runs, up to PF_TOOLS_JOBS_PER_FAMILY jobs at once, each
 * claimed from the queue with FOR UPDATE SKIP LOCKED (every instance runs its executors; no two claim one job) and
 * held by its lease. They look for work after each commit of this instance that queued a job, after each job they
 * end, and every POLL_MS. Stopping aborts what runs; those jobs go back to the queue.
 */
export const executors: Worker<ToolsContext> = async (ctx) => {
  const tools = executedTools(ctx);
  const stopping = new AbortController();
  const runner: AttemptRunner = { ctx, stopping: stopping.signal };
  const families = [...new Set(tools.map((tool) => tool.family))].map(
    (family) =>
      new FamilyExecutor(
        runner,
        family,
        tools.filter((tool) => tool.family === family),
      ),
  );
  const look = () => families.forEach((family) => family.look());
  const timer = setInterval(look, POLL_MS);
  const unwake = ctx.commits.on("jobs", look);
  look();
  return async () => {
    unwake();
    clearInterval(timer);
    stopping.abort();
    await Promise.all(families.map((family) => family.stopped()));
  };
};

/** One family's executor: its attempts under way, and a claim loop that fills the free ones. */
class FamilyExecutor {
  private readonly running = new Set<Promise<void>>();
  private claiming?: Promise<void>;
  private again = false;

  constructor(
    private readonly runner: AttemptRunner,
    private readonly family: string,
    private readonly tools: ToolDescriptor[],
  ) {}

  /** Claims queued jobs while a slot is free; a call during a claim makes one more round after it. */
  look(): void {
    if (this.runner.stopping.aborted) return;
    if (this.claiming) {
      this.again = true;
      return;
    }
    this.claiming = outsideCall(() => this.fill())
      .catch((error: unknown) =>
        this.runner.ctx.logger.error(
          { err: error, family: this.family },
          "claiming a job failed; the next look tries again",
        ),
      )
      .finally(() => {
        this.claiming = undefined;
        if (this.again) {
          this.again = false;
          this.look();
        }
      });
  }

  async stopped(): Promise<void> {
    await this.claiming;
    await Promise.all(this.running);
  }

  private async fill(): Promise<void> {
    const { ctx, stopping } = this.runner;
    while (!stopping.aborted && this.running.size < ctx.settings.jobsPerFamily) {
      const at = ctx.clock.now();
      const leaseUntil = new Date(at.getTime() + ctx.settings.leaseMs);
      const row = await ctx.transaction((em) => claimQueuedJob(em, this.family, at, leaseUntil));
      if (!row) return;
      ctx.news.tell(row.id);
      const tool = this.tools.find((each) => each.id === row.tool);
      const attempt = (async () => {
        if (!tool) throw new Error(`no tool ${row.tool} runs in family ${this.family}`);
        await runAttempt(this.runner, row, tool, JOB_TOOLS[tool.id]);
      })()
        .catch((error: unknown) => ctx.logger.error({ err: error, job: row.id }, "a job's attempt failed"))
        .finally(() => {
          this.running.delete(attempt);
          this.look();
        });
      this.running.add(attempt);
    }
  }
}
