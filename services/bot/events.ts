import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import {
  CommandEventSchema,
  DeviceEventSchema,
  DispatchEventSchema,
  JobEventSchema,
  RobotEventSchema,
} from "../../gen/pf/bot/v1/events_pb.js";
import type { JobExit } from "../../gen/pf/bot/v1/jobs_pb.js";
import type { OutputStream } from "../../gen/pf/bot/v1/link_pb.js";
import { recordEvent } from "../kit/events/outbox.js";
import type { JobRow } from "./db/entities.js";

/** The subjects of a dispatched job's device frames, in order per job by seq: run consumes them. */
export const jobSubjects = {
  received: "bot.job.received",
  started: "bot.job.started",
  output: "bot.job.output",
  ended: "bot.job.ended",
} as const;

/** The subjects the instances holding links listen to (`links.ts`): each closes or feeds the links it holds. */
export const linkSubjects = {
  devicePaired: "bot.device.paired",
  deviceConnected: "bot.device.connected",
  deviceRevoked: "bot.device.revoked",
  deviceRotated: "bot.device.rotated",
  robotCreated: "bot.robot.created",
  robotDeleted: "bot.robot.deleted",
  estopLatched: "bot.robot.estop_latched",
  estopCleared: "bot.robot.estop_cleared",
  commanded: "bot.robot.commanded",
  placed: "bot.dispatch.placed",
  cancelRequested: "bot.dispatch.cancel_requested",
} as const;

/** What a job event says beyond its job: the device's time, and output or exit where it has them. */
export interface JobEventFacts {
  at: Date;
  stream?: OutputStream;
  text?: string;
  exit?: JobExit;
  startedAt?: Date | null;
}

/** One bot.job.* event for a job, numbered after the job's last (the caller saves the row in the same transaction). */
export function jobEvent(em: EntityManager, kind: keyof typeof jobSubjects, row: JobRow, facts: JobEventFacts) {
  row.eventSeq += 1;
  return recordEvent(em, jobSubjects[kind], JobEventSchema, {
    jobId: row.id,
    projectId: row.projectId,
    nodeId: row.nodeId,
    robotId: row.robotId,
    seq: BigInt(row.eventSeq),
    at: timestampFromDate(facts.at),
    stream: facts.stream,
    text: facts.text ?? "",
    exit: facts.exit,
    startedAt: facts.startedAt ? timestampFromDate(facts.startedAt) : undefined,
  });
}

/** A device's life: paired, connected (older links close), revoked or rotated (its link closes). */
export function deviceEvent(
  em: EntityManager,
  subject: (typeof linkSubjects)["devicePaired" | "deviceConnected" | "deviceRevoked" | "deviceRotated"],
  facts: { deviceId: string; robotId: string; actor: string; at: Date; linkId?: string; reason?: string },
) {
  return recordEvent(em, subject, DeviceEventSchema, {
    deviceId: facts.deviceId,
    robotId: facts.robotId,
    linkId: facts.linkId ?? "",
    reason: facts.reason ?? "",
    actor: facts.actor,
    at: timestampFromDate(facts.at),
  });
}

/** A robot's life and its e-stop. */
export function robotEvent(
  em: EntityManager,
  subject: (typeof linkSubjects)["robotCreated" | "robotDeleted" | "estopLatched" | "estopCleared"],
  facts: { robotId: string; owner: string; actor: string; actingFor: string; at: Date },
) {
  return recordEvent(em, subject, RobotEventSchema, {
    robotId: facts.robotId,
    owner: facts.owner,
    actor: facts.actor,
    actingFor: facts.actingFor,
    at: timestampFromDate(facts.at),
  });
}

/** An operator's command, accepted: the instances holding the robot's links send it. */
export function commandEvent(
  em: EntityManager,
  facts: { robotId: string; commandId: string; name: string; argsJson: string; subject: string; at: Date },
) {
  return recordEvent(em, linkSubjects.commanded, CommandEventSchema, { ...facts, at: timestampFromDate(facts.at) });
}

/** A frame waiting for its device, or a cancel for a job on it. */
export function dispatchEvent(
  em: EntityManager,
  subject: (typeof linkSubjects)["placed" | "cancelRequested"],
  row: JobRow,
  at: Date,
) {
  return recordEvent(em, subject, DispatchEventSchema, {
    jobId: row.id,
    nodeId: row.nodeId,
    robotId: row.robotId,
    projectId: row.projectId,
    at: timestampFromDate(at),
  });
}
