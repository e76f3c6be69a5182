import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import { AiAdminEventSchema, AiRunEventSchema } from "../../gen/pf/ai/v1/events_pb.js";
import { recordEvent } from "../kit/events/outbox.js";

/** The subjects of ai.run-event@1 (a run's end) and ai.admin-event@1. */
export const aiSubjects = {
  runSucceeded: "ai.run.succeeded",
  runFailed: "ai.run.failed",
  runCanceled: "ai.run.canceled",
  definitionStatusChanged: "ai.definition.status_changed",
  breakerOpened: "ai.provider.breaker_opened",
} as const;

export interface RunEventFacts {
  runId: string;
  operation: string;
  workflow: string;
  namespace: string;
  caller: string;
  stub: boolean;
  failureCode?: string;
  at: Date;
}

/** Records a run's end in the transaction that ended it; the outbox publishes it after the commit. */
export async function recordRunEvent(
  em: EntityManager,
  state: "succeeded" | "failed" | "canceled",
  facts: RunEventFacts,
): Promise<void> {
  const subject = {
    succeeded: aiSubjects.runSucceeded,
    failed: aiSubjects.runFailed,
    canceled: aiSubjects.runCanceled,
  }[state];
  const { at, ...rest } = facts;
  await recordEvent(em, subject, AiRunEventSchema, { ...rest, at: timestampFromDate(at) });
}

export interface AdminEventFacts {
  targetKind: string;
  targetKey: string;
  version?: number;
  status: string;
  at: Date;
}

/** Records a definition's status change or a breaker opening, in the transaction that made it. */
export async function recordAdminEvent(
  em: EntityManager,
  subject: typeof aiSubjects.definitionStatusChanged | typeof aiSubjects.breakerOpened,
  facts: AdminEventFacts,
): Promise<void> {
  const { at, ...rest } = facts;
  await recordEvent(em, subject, AiAdminEventSchema, { ...rest, at: timestampFromDate(at) });
}
