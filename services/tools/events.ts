import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import { ToolsEventSchema } from "../../gen/pf/tools/v1/events_pb.js";
import { recordEvent } from "../kit/events/outbox.js";

/** The subjects of tools.event@1: a job's end. */
export const toolsSubjects = {
  jobSucceeded: "tools.job.succeeded",
  jobFailed: "tools.job.failed",
  jobCanceled: "tools.job.canceled",
} as const;

export type ToolsSubject = (typeof toolsSubjects)[keyof typeof toolsSubjects];

export interface ToolsEventFacts {
  jobId: string;
  tool: string;
  owner: string;
  failureCode?: string;
  at: Date;
}

/** Records a tools event in the transaction that ended the job; the outbox publishes it after the commit. */
export async function recordToolsEvent(
  em: EntityManager,
  subject: ToolsSubject,
  facts: ToolsEventFacts,
): Promise<void> {
  const { at, ...rest } = facts;
  await recordEvent(em, subject, ToolsEventSchema, { ...rest, at: timestampFromDate(at) });
}
