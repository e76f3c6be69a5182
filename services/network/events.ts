import type { EntityManager } from "@mikro-orm/postgresql";
import {
  CoinsChangedSchema,
  CoinsTransferredSchema,
  ModuleWrittenSchema,
  NotificationPushedSchema,
  RelationChangedSchema,
  SubjectChangedSchema,
} from "../../gen/pf/network/v1/events_pb.js";
import type { Notification } from "../../gen/pf/network/v1/network_pb.js";
import type { SubjectRef } from "../../gen/pf/v1/refs_pb.js";
import { recordEvent } from "../kit/events/outbox.js";

/** The subjects this service publishes. */
export const subjects = {
  coinsCredited: "network.coins.credited",
  coinsDebited: "network.coins.debited",
  coinsTransferred: "network.coins.transferred",
  notificationPushed: "network.notification.pushed",
  moduleWritten: "network.module.written",
  staffChanged: "network.staff.changed",
  blockChanged: "network.block.changed",
  subjectChanged: "network.subject.changed",
} as const;

export function coinsChanged(
  em: EntityManager,
  entry: { entryId: string; appId: string; subject: string; delta: bigint; balance: bigint; reason: string; at: Date },
) {
  return recordEvent(
    em,
    entry.delta > 0n ? subjects.coinsCredited : subjects.coinsDebited,
    CoinsChangedSchema,
    entry,
    entry.at,
  );
}

export function coinsTransferred(
  em: EntityManager,
  transfer: { transferId: string; appId: string; fromSubject: string; toSubject: string; amount: bigint; at: Date },
) {
  return recordEvent(em, subjects.coinsTransferred, CoinsTransferredSchema, transfer, transfer.at);
}

export function notificationPushed(em: EntityManager, notification: Notification) {
  return recordEvent(em, subjects.notificationPushed, NotificationPushedSchema, { notification });
}

export function moduleWritten(
  em: EntityManager,
  write: { namespace: string; subject: string; revision: bigint; writtenBy: string; at: Date },
) {
  return recordEvent(em, subjects.moduleWritten, ModuleWrittenSchema, write, write.at);
}

export function subjectChanged(em: EntityManager, subject: SubjectRef, at: Date) {
  return recordEvent(em, subjects.subjectChanged, SubjectChangedSchema, { subject }, at);
}

export function relationChanged(
  em: EntityManager,
  subject: typeof subjects.staffChanged | typeof subjects.blockChanged,
  change: { subject: string; other: string; present: boolean; at: Date },
) {
  return recordEvent(em, subject, RelationChangedSchema, change, change.at);
}
