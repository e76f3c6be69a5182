import { create, toJson } from "@bufbuild/protobuf";
import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import type { ConnectError, ServiceImpl } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import {
  ArtifactSchema,
  DeviceCapsSchema,
  LinkFrameSchema,
  OutputStream,
  type Hello,
  type LinkFrame,
} from "../../../gen/pf/bot/v1/link_pb.js";
import type { BotLinkService } from "../../../gen/pf/bot/v1/link_service_pb.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import { outsideCall } from "../../kit/runtime/call.js";
import type { BotContext } from "../context.js";
import { deviceByCredential, deviceById, linkClosed, saveDevices } from "../db/devices.js";
import type { JobRow } from "../db/entities.js";
import { frameOf, jobById, openJobsOf, saveJobs, waitingJobs } from "../db/jobs.js";
import { robotById } from "../db/robots.js";
import { afterReport, appendBounded, CAPTURE_MAX_BYTES } from "../domain/dispatch.js";
import { jobFrame, stricterTtl } from "../domain/frames.js";
import { secretHash } from "../../kit/auth/secrets.js";
import { canceled, endJob, lost } from "../endings.js";
import { deviceEvent, jobEvent } from "../events.js";
import { DeviceLink, type LinkNotice } from "../links.js";

/** The header a device presents its credential in (declared on the route: `credential_headers`). */
export const CREDENTIAL_HEADER = "x-pf-device-credential";

/** Output frames carry at most this much text (the contract's bound). */
const OUTPUT_MAX_BYTES = 64 * 1024;

const credentialInvalid = () =>
  problem(
    401,
    "bot.device.credential_invalid",
    "The device credential is unknown, revoked or rotated out: pair again, or link with the rotated credential.",
  );

type Report = Extract<LinkFrame["frame"], { case: "ack" | "started" | "output" | "exit" }>;

const dateOf = (at: Timestamp | undefined) => (at ? timestampDate(at) : undefined);

/**
 * The device link. The credential is checked before anything is sent, so a bad one is the call's 401 (an HTTP
 * problem at the gateway, never an open socket); then `welcome` goes first. Device frames are applied one at a
 * time in order, each in a short transaction of its own that writes the job and its bot.job.* event together; no
 * transaction waits on the socket. The link's work runs outside the call's deadline (a link lasts for days).
 */
export function linkHandlers(ctx: BotContext): Pick<ServiceImpl<typeof BotLinkService>, "link"> {
  return {
    async *link(frames, call) {
      const credential = call.requestHeader.get(CREDENTIAL_HEADER) ?? "";
      if (credential === "")
        throw problem(401, "bot.device.credential_invalid", "A device link presents its X-PF-Device-Credential.");
      const hash = secretHash(credential);
      const { id, robotId } = await pairedDevice(ctx, hash);
      const link: DeviceLink = new DeviceLink(id, robotId, call.signal, (notice) =>
        outsideCall(() => reacted(ctx, link, notice)),
      );
      // Held before the credential is read again below: a revoke or rotation committed after that read is heard.
      ctx.links.hold(link);
      try {
        const estop = await ctx.links.recordOpen(() =>
          outsideCall(() => ctx.transaction((em) => opened(ctx, em, link, hash))),
        );
        const welcome = { deviceId: link.deviceId, robotId: link.robotId, estop };
        yield create(LinkFrameSchema, { frame: { case: "welcome", value: welcome } });
        void outsideCall(() => readFrames(ctx, link, frames));
        yield* link.out;
      } finally {
        link.out.end();
        await ctx.links.release(link, () =>
          outsideCall(() => ctx.transaction((em) => linkClosed(em, link.deviceId, link.id))).catch((error: unknown) =>
            ctx.logger.warn({ err: error, device: link.deviceId }, "device link end not recorded"),
          ),
        );
      }
    },
  };
}

/**
 * The paired device holding the credential, as ids only: the entity would keep its entity manager (identity map,
 * unit of work) alive for as long as the link lasts.
 */
async function pairedDevice(ctx: BotContext, hash: string): Promise<{ id: string; robotId: string }> {
  const found = await deviceByCredential(ctx.orm.em.fork(), hash);
  if (!found || found.status !== "paired") throw credentialInvalid();
  return { id: found.id, robotId: found.robotId };
}

/** Records the link as the device's presence (older links of the device end) and answers the robot's e-stop. */
async function opened(ctx: BotContext, em: EntityManager, link: DeviceLink, hash: string) {
  const device = await deviceById(em, link.deviceId, true);
  const robot = device && (await robotById(em, device.robotId));
  if (!device || device.status !== "paired" || device.credentialHash !== hash || !robot || robot.deletedAt)
    throw credentialInvalid();
  const at = ctx.clock.now();
  device.linkId = link.id;
  device.linkInstance = ctx.links.instance;
  device.connectedAt = at;
  device.lastSeenAt = at;
  await saveDevices(em);
  await deviceEvent(em, "bot.device.connected", {
    deviceId: device.id,
    robotId: device.robotId,
    linkId: link.id,
    actor: device.id,
    at,
  });
  return robot.estopLatched;
}

/** Device frames applied together at most. */
const FRAMES_AT_ONCE = 64;

/**
 * Reads the device's frames until it ends its side or the link ends; a failure ends the link with its problem.
 * The frames that have arrived by the time one is applied go with it (a short job's ack, start, output and exit
 * come together): their reports share one transaction instead of waiting for one another's.
 */
async function readFrames(ctx: BotContext, link: DeviceLink, frames: AsyncIterable<LinkFrame>): Promise<void> {
  const iterator = frames[Symbol.asyncIterator]();
  try {
    let next = iterator.next();
    for (let done = false; !done;) {
      const first = await link.out.orEnded(next);
      if (first === undefined || first.done) break;
      const batch = [first.value];
      next = iterator.next();
      while (batch.length < FRAMES_AT_ONCE) {
        // Only frames already here: a frame still on its way is the next batch's.
        const more = await link.out.orEnded(
          Promise.race([next, new Promise<null>((resolve) => setImmediate(resolve, null))]),
        );
        if (more === null) break;
        if (more === undefined || more.done) {
          done = true;
          break;
        }
        batch.push(more.value);
        next = iterator.next();
      }
      await link.serial(() => applied(ctx, link, batch));
    }
    link.out.end();
  } catch (error) {
    link.out.fail(error);
  } finally {
    void Promise.resolve(iterator.return?.()).catch(() => undefined);
  }
}

/**
 * Device frames in order: hello first, then reports about its jobs (those in a row applied in one transaction); a
 * frame that is bot's to send is refused, after the reports before it are applied.
 */
async function applied(ctx: BotContext, link: DeviceLink, frames: LinkFrame[]): Promise<void> {
  for (let i = 0; i < frames.length;) {
    const { frame: sent } = frames[i];
    if (sent.case === "hello") {
      await hello(ctx, link, sent.value);
      i++;
      continue;
    }
    const reports: Report[] = [];
    let fault: ConnectError | undefined;
    for (; i < frames.length && frames[i].frame.case !== "hello"; i++) {
      const report = frames[i].frame;
      fault = reportFault(link, report);
      if (fault) break;
      reports.push(report as Report);
    }
    if (reports.length > 0) await reported(ctx, link, reports);
    if (fault) throw fault;
  }
}

/** What is wrong with a device's report about a job, checked before it is applied (the link ends with it). */
function reportFault(link: DeviceLink, sent: LinkFrame["frame"]): ConnectError | undefined {
  if (sent.case !== "ack" && sent.case !== "started" && sent.case !== "output" && sent.case !== "exit")
    return invalid("frame", sent.case ? `A ${sent.case} frame is bot's to send, never a device's.` : "An empty frame.");
  if (!link.caps) return invalid("hello", "A device says hello before any other frame.");
  if (sent.case === "output" && sent.value.stream === OutputStream.UNSPECIFIED)
    return invalid("output.stream", "Output is stdout or stderr.");
  if (sent.case === "output" && Buffer.byteLength(sent.value.text) > OUTPUT_MAX_BYTES)
    return invalid("output.text", `An output frame carries at most ${OUTPUT_MAX_BYTES} bytes of text.`);
  return undefined;
}

/**
 * The device's hello: its advertisement is recorded and, on the link's first hello, its jobs reconciled (a job it
 * no longer runs after linking again ends lost; a job it runs that bot does not hold open for it is cancelled), then
 * its waiting frames go out.
 */
async function hello(ctx: BotContext, link: DeviceLink, said: Hello): Promise<void> {
  // A later hello on the same link advertises again; only the first reconciles (the device's state at linking).
  const first = link.caps === undefined;
  const running = new Set(first ? said.runningJobIds : []);
  const cancels = await ctx.transaction(async (em) => {
    const device = await deviceById(em, link.deviceId, true);
    if (!device || device.status !== "paired") return [];
    const at = ctx.clock.now();
    device.agentVersion = said.agentVersion;
    device.classes = [...new Set(said.classes)];
    device.artifacts = said.artifacts.map((artifact) => toJson(ArtifactSchema, artifact));
    device.caps = said.caps ? (toJson(DeviceCapsSchema, said.caps) as Record<string, unknown>) : null;
    device.lastSeenAt = at;
    await saveDevices(em);
    if (!first) return [];
    const open = new Map((await openJobsOf(em, [device.id])).map((job) => [job.id, job]));
    for (const job of open.values()) {
      if (running.has(job.id)) continue;
      if (job.state !== "dispatched") await endJob(em, job, lost("the device linked again without it"), at);
      else if (job.cancelRequested) await endJob(em, job, canceled("canceled before it reached the device"), at);
    }
    await saveJobs(em);
    return [...running].filter((id) => !open.has(id) || open.get(id)!.cancelRequested);
  });
  link.caps = said.caps ?? create(DeviceCapsSchema);
  for (const id of running) link.sent.add(id);
  for (const jobId of cancels) link.send({ case: "jobCancel", value: { jobId } });
  await deliverWaiting(ctx, link);
}

/** Sends the frames waiting for the device that this link has not sent, unless its robot's e-stop is latched. */
async function deliverWaiting(ctx: BotContext, link: DeviceLink): Promise<void> {
  if (!link.caps) return;
  const em = ctx.orm.em.fork();
  const robot = await robotById(em, link.robotId);
  if (!robot || robot.deletedAt || robot.estopLatched) return;
  for (const job of await waitingJobs(em, link.deviceId)) {
    if (link.sent.has(job.id)) continue;
    link.sent.add(job.id);
    link.out.push(jobFrame(job.id, frameOf(job), ctx.settings.mediaUrl));
  }
}

/** A notice for this link: frames placed for its device, or a cancel (sent if its frame went out, else ended here). */
async function reacted(ctx: BotContext, link: DeviceLink, notice: LinkNotice): Promise<void> {
  if (notice.kind === "placed") {
    // Its frame already went out (the dispatch's own instance noticed it first).
    if (notice.jobId !== undefined && link.sent.has(notice.jobId)) return;
    if (notice.jobId !== undefined && notice.frame && link.caps) {
      link.sent.add(notice.jobId);
      link.out.push(notice.frame);
      return;
    }
    return deliverWaiting(ctx, link);
  }
  if (link.sent.has(notice.jobId)) {
    link.send({ case: "jobCancel", value: { jobId: notice.jobId } });
    return;
  }
  await ctx.transaction(async (em) => {
    const job = await jobById(em, notice.jobId, true);
    if (!job || job.state !== "dispatched" || !job.cancelRequested) return;
    await endJob(em, job, canceled("canceled before it reached the device"), ctx.clock.now());
    await saveJobs(em);
  });
}

/**
 * A device's reports about its jobs, in order, each applied to its job with its bot.job.* event, all in one
 * transaction: each job locked once (its later reports apply to the row in hand) and written once, at the end. A
 * report that changes nothing is ignored (a repeated ack, an output seq already applied); one about a job bot does
 * not hold open for this device (ended, another device's, unknown) is answered job_cancel.
 */
async function reported(ctx: BotContext, link: DeviceLink, reports: Report[]): Promise<void> {
  const cancels = await ctx.transaction(async (em) => {
    const stops = new Set<string>();
    const locked = new Map<string, JobRow | null>();
    for (const report of reports) {
      const { jobId } = report.value;
      if (!locked.has(jobId)) locked.set(jobId, await jobById(em, jobId, true));
      if (await reportApplied(ctx, em, link, locked.get(jobId)!, report)) stops.add(jobId);
    }
    await saveJobs(em);
    return stops;
  });
  for (const jobId of cancels) link.send({ case: "jobCancel", value: { jobId } });
}

/** One report on its job (locked, or null: unknown) in the caller's transaction; answers whether the device is told to cancel the job. */
async function reportApplied(
  ctx: BotContext,
  em: EntityManager,
  link: DeviceLink,
  job: JobRow | null,
  report: Report,
): Promise<boolean> {
  if (!job || job.nodeId !== link.deviceId) return report.case !== "exit";
  const next = afterReport(job.state as Parameters<typeof afterReport>[0], report.case);
  if (next === undefined) return job.state === "ended" && report.case !== "exit";
  const at = ctx.clock.now();
  // ttl counts from the device's receipt; the device keeps the stricter of the job's and its own maximum.
  const lostAt = () =>
    new Date(
      at.getTime() + stricterTtl(Number(frameOf(job).ttlMs), Number(link.caps!.maxTtlMs)) + ctx.settings.lostGraceMs,
    );
  switch (report.case) {
    case "ack":
      job.receivedAt = dateOf(report.value.receivedAt) ?? at;
      job.lostAt = lostAt();
      await jobEvent(em, "received", job, { at: job.receivedAt });
      break;
    case "started":
      job.startedAt = dateOf(report.value.startedAt) ?? at;
      if (!job.receivedAt) job.lostAt = lostAt();
      await jobEvent(em, "started", job, { at: job.startedAt });
      break;
    case "output": {
      const seq = Number(report.value.seq);
      if (seq <= job.outputSeq) return false;
      job.outputSeq = seq;
      const { stream, text } = report.value;
      const bytes = Buffer.byteLength(text);
      if (stream === OutputStream.STDOUT) {
        job.stdout = appendBounded(job.stdout, job.stdoutBytes, text, CAPTURE_MAX_BYTES);
        job.stdoutBytes += bytes;
      } else {
        job.stderr = appendBounded(job.stderr, job.stderrBytes, text, CAPTURE_MAX_BYTES);
        job.stderrBytes += bytes;
      }
      await jobEvent(em, "output", job, { at, stream, text });
      break;
    }
    case "exit": {
      const { exit, endedAt, startedAt } = report.value;
      await endJob(em, job, exit ?? {}, dateOf(endedAt) ?? at, dateOf(startedAt) ?? job.startedAt);
      break;
    }
  }
  job.state = next;
  return false;
}
