import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { JobReadResultSchema, JobSchema, type JobReadResult } from "../../../gen/pf/tools/v1/jobs_pb.js";
import type { ToolsService } from "../../../gen/pf/tools/v1/tools_pb.js";
import { invalid } from "../../kit/handler/problem.js";
import { StreamSlots } from "../../kit/rpc/stream-slots.js";
import type { ToolsContext } from "../context.js";
import type { JobEventRow, JobRow } from "../db/entities.js";
import { jobEventsAfter } from "../db/job-events.js";
import { jobById, jobView, ownJob } from "../db/jobs.js";
import { RECHECK_MS } from "../domain/jobs/await.js";
import { Wakes } from "../../kit/runtime/wakes.js";
import { hasEnded } from "../domain/jobs/states.js";
import { callerKeyOf } from "../domain/run/caller.js";

type Handlers = Pick<ServiceImpl<typeof ToolsService>, "watchJob">;

/** Persisted events read per query of an open stream. */
const PAGE = 100;
/** Event streams one owner may hold open at once in this process. */
const WATCHES_PER_OWNER = 16;
/** The largest event id (a bigint). */
const MAX_EVENT_ID = 9_223_372_036_854_775_807n;

/** A job's progress as server-sent events. */
export function jobEventHandlers(ctx: ToolsContext): Handlers {
  const open = new StreamSlots();
  const news = ctx.news;
  return {
    /**
     * The job as it stands first (no event id: the answer's headers go out at once, even when nothing new has
     * happened), then its persisted events after the resume point in order, each with its id, then each new one
     * as it is committed, until its end (succeeded, failed, canceled) has been sent. Woken at once by this
     * process's changes, and reading again every RECHECK_MS for another instance's.
     */
    async *watchJob(request, call) {
      let after = resumePoint(call.requestHeader.get("last-event-id"), request.lastEventId);
      const owner = callerKeyOf(ctx, call);
      const first = await ownJob(ctx.orm.em.fork(), request.id, owner);
      const release = open.take([{ name: "tools.job.watch", key: owner, limit: WATCHES_PER_OWNER }]);
      const wakes = new Wakes(call.signal);
      // Listening before the first read: an event committed between the read and the wait still wakes it.
      const stop = news.watch(first.id, wakes.wake);
      try {
        yield create(JobReadResultSchema, { job: await jobView(ctx.orm.em.fork(), first) });
        while (!call.signal.aborted) {
          const em = ctx.orm.em.fork();
          const events = await jobEventsAfter(em, first.id, after, PAGE);
          for (const event of events) {
            const last = hasEnded(event.kind);
            yield await eventResult(ctx, first, event, last);
            after = event.id;
            if (last) return;
          }
          if (events.length === PAGE) continue;
          // Resumed after its end: nothing more will come (unless its end committed between the two reads).
          if (events.length === 0 && hasEnded((await jobById(em, first.id))!.state)) {
            if ((await jobEventsAfter(em, first.id, after, 1)).length === 0) return;
            continue;
          }
          await wakes.next(RECHECK_MS);
        }
      } finally {
        stop();
        release();
      }
    },
  };
}

/**
 * One event as the stream sends it: its id, kind and note, and the job as the event left it (state and progress);
 * the job's last event carries the whole job as it stands (its result files, output or failure).
 */
async function eventResult(ctx: ToolsContext, job: JobRow, event: JobEventRow, last: boolean): Promise<JobReadResult> {
  const em = ctx.orm.em.fork();
  const whole = last ? await jobView(em, (await jobById(em, job.id))!) : undefined;
  return create(JobReadResultSchema, {
    id: event.id,
    kind: event.kind,
    message: event.message,
    job:
      whole ??
      create(JobSchema, { id: job.id, tool: job.tool, owner: job.owner, state: event.state, progress: event.progress }),
  });
}

/**
 * Where a stream resumes: after the event the Last-Event-ID header names (else the `last_event_id` query
 * parameter), "0" for the start. An id is a number this service gave.
 */
function resumePoint(header: string | null, query: string): string {
  const id = header ?? query;
  if (id === "") return "0";
  if (!/^[0-9]{1,19}$/.test(id) || BigInt(id) > MAX_EVENT_ID)
    throw invalid("Last-Event-ID", "Last-Event-ID is the id of an event of this job's stream.");
  return BigInt(id).toString();
}
