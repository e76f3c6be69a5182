import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import { HostEventSchema } from "../../gen/pf/host/v1/events_pb.js";
import { recordEvent } from "../kit/events/outbox.js";

/** The subjects of host.event@1: each changes what a site serves, so serving instances drop what they cached of it. */
export const hostSubjects = {
  deployReady: "host.deploy.ready",
  deployFailed: "host.deploy.failed",
  deployActivated: "host.deploy.activated",
  deployDeleted: "host.deploy.deleted",
  siteCreated: "host.site.created",
  siteDeleted: "host.site.deleted",
  siteTakenDown: "host.site.taken_down",
  siteRestored: "host.site.restored",
  projectTakenDown: "host.project.taken_down",
  projectRestored: "host.project.restored",
  projectDeleted: "host.project.deleted",
  domainVerified: "host.domain.verified",
  domainRemoved: "host.domain.removed",
} as const;

export type HostSubject = (typeof hostSubjects)[keyof typeof hostSubjects];

/** What a host event names: the project always, and the site, deploy or domain where the change is theirs. */
export interface HostEventFacts {
  projectId: string;
  siteId?: string;
  deployId?: string;
  hostname?: string;
  actor: string;
  at: Date;
}

/** Records a host event in the transaction that made the change; the outbox publishes it after the commit. */
export async function recordHostEvent(em: EntityManager, subject: HostSubject, facts: HostEventFacts): Promise<void> {
  const { at, ...rest } = facts;
  await recordEvent(em, subject, HostEventSchema, { ...rest, at: timestampFromDate(at) });
}
