import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { JobStreamEventSchema, type JobStreamEvent } from "../../../gen/pf/run/v1/jobs_pb.js";
import { JobStreamTicketResultSchema, type JobStreamRequest, type RunService } from "../../../gen/pf/run/v1/run_pb.js";
import { principalOf } from "../../kit/auth/principal.js";
import { problem } from "../../kit/handler/problem.js";
import type { RunContext } from "../context.js";
import { jobNotFound, jobToProto, readJob, type JobView } from "../db/jobs.js";
import { insertTicket, streamEventsAfter, streamEventToProto, useTicket } from "../db/stream.js";
import { HeardEvents, resumePoint } from "../domain/stream.js";
import { newSecret, secretHash } from "../../kit/auth/secrets.js";
import { TICKET_TTL_MS } from "../domain/tickets.js";
import { visibleJob } from "../projects.js";
import { Wakes } from "../../kit/runtime/wakes.js";

type StreamHandlers = Pick<ServiceImpl<typeof RunService>, "createStreamTicket" | "streamJob">;

/** Persisted events read per query of an open stream. */
const PAGE = 100;

const ticketInvalid = () =>
  problem(401, "run.stream.ticket_invalid", "The stream ticket is unknown, used, expired, or not for this job.");

/**
 * The job a stream opens: with a ticket, the ticket's job (the ticket used up here, once; bound to its minter
 * when the opener shows a token too); else with a token, a job of its project.
 */
async function streamedJob(ctx: RunContext, call: HandlerContext, request: JobStreamRequest): Promise<JobView> {
  const principal = principalOf(call);
  if (request.ticket === "") {
    if (principal.kind === "anonymous")
      throw problem(
        401,
        "run.stream.ticket_invalid",
        "A job's stream opens with a ticket (?ticket=) or a bearer token.",
      );
    return visibleJob(ctx, call, request.id);
  }
  const ticket = {
    hash: secretHash(request.ticket),
    jobId: request.id,
    minter: principal.kind === "anonymous" ? undefined : principal.sub,
    at: ctx.clock.now(),
  };
  if (!(await ctx.transaction((em) => useTicket(em, ticket)))) throw ticketInvalid();
  const job = await readJob(ctx, request.id);
  if (!job) throw jobNotFound();
  return job;
}

/** Stream tickets and the job's live stream. */
export function streamHandlers(ctx: RunContext): StreamHandlers {
  return {
    async createStreamTicket(request, call) {
      const job = await visibleJob(ctx, call, request.id);
      const ticket = newSecret();
      const expiresAt = new Date(ctx.clock.now().getTime() + TICKET_TTL_MS);
      const minter = principalOf(call).sub;
      await ctx.transaction((em) =>
        insertTicket(em, { hash: secretHash(ticket), jobId: job.id, minter, expiresAt, usedAt: null }),
      );
      return create(JobStreamTicketResultSchema, { ticket, jobId: job.id, expiresAt: timestampFromDate(expiresAt) });
    },

    /**
     * The job as it is first (so the answer's headers go out at once), then its persisted events after the resume
     * point in order, then each new one as it is committed: the watchers hand it over, and it is read back only
     * past a gap or when no wake came for a while (the recheck), until the job's end has been sent.
     */
    async *streamJob(request, call) {
      // A bad Last-Event-ID is refused before a ticket is used up.
      let after = resumePoint(call.requestHeader.get("last-event-id"), request.lastEventId);
      const wakes = new Wakes(call.signal);
      const heard = new HeardEvents<JobStreamEvent>(PAGE);
      // Listening before the job's first read: an event committed between the read and the wait still reaches it.
      const stop = ctx.watchers.watch(request.id, (news) => {
        heard.add(news);
        wakes.wake();
      });
      try {
        const job = await streamedJob(ctx, call, request);
        yield create(JobStreamEventSchema, {
          at: timestampFromDate(ctx.clock.now()),
          event: { case: "job", value: jobToProto(job) },
        });
        let read = true;
        while (!call.signal.aborted) {
          const handed: JobStreamEvent[] | undefined = read ? undefined : heard.after(after);
          const events: JobStreamEvent[] =
            handed ?? (await streamEventsAfter(ctx, job.id, after, PAGE)).map(streamEventToProto);
          for (const event of events) {
            yield event;
            after = Number(event.id);
            if (event.event.case === "state" && event.event.value.state === "ended") return;
          }
          read = handed === undefined && events.length === PAGE;
          if (read) continue;
          if (!handed && events.length === 0 && (await readJob(ctx, job.id))?.state === "ended") {
            // Resumed after its end: nothing more will come (unless the end committed between the two reads).
            if ((await streamEventsAfter(ctx, job.id, after, 1)).length === 0) return;
            read = true;
            continue;
          }
          read = !(await wakes.next(ctx.settings.streamRecheckMs));
        }
      } finally {
        stop();
      }
    },
  };
}
