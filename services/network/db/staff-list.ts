import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { StaffListResultSchema, type StaffListResult } from "../../../gen/pf/network/v1/network_pb.js";
import type { ServiceContext } from "../../kit/service/module.js";
import { byRank, roleOf } from "../domain/staff.js";
import { subjects } from "../events.js";
import { StaffMember } from "./entities.js";
import { subjectRefs } from "./subject-refs.js";

/** How old a cached staff list may get if a change event were missed (NATS down). */
const STAFF_LIST_TTL_MS = 30_000;

/**
 * The staff list changes rarely and is read on every moderation view and
 * report, so it is answered from memory: dropped on every staff change (this
 * instance's writes at once, other instances' through network.staff.changed
 * and network.subject.changed) and never older than STAFF_LIST_TTL_MS. One per
 * instance, in the service context; the subscriptions reach every instance
 * (a durable consumer would reach only one).
 */
export class StaffList {
  private cached?: { answer: Promise<StaffListResult>; until: number };

  constructor(private readonly ctx: ServiceContext) {
    // Staff entries carry their display projection, so a display change also drops the list.
    ctx.bus.subscribe(subjects.staffChanged, () => this.forget());
    ctx.bus.subscribe(subjects.subjectChanged, () => this.forget());
  }

  read(): Promise<StaffListResult> {
    const now = Date.now();
    if (!this.cached || this.cached.until < now) {
      const answer = this.load();
      this.cached = { answer, until: now + STAFF_LIST_TTL_MS };
      answer.catch(() => this.forget());
    }
    return this.cached.answer;
  }

  forget(): void {
    this.cached = undefined;
  }

  private async load(): Promise<StaffListResult> {
    const em = this.ctx.orm.em.fork();
    const members = await em.find(StaffMember, {});
    const refs = await subjectRefs(
      this.ctx,
      members.map((m) => m.subject),
    );
    const staff = members
      .map((m) => ({ role: roleOf(m.role), subject: m.subject, capabilities: m.capabilities, updatedAt: m.updatedAt }))
      .sort(byRank)
      .map((m) => ({
        subject: refs.get(m.subject),
        role: m.role,
        capabilities: m.capabilities,
        updatedAt: timestampFromDate(m.updatedAt),
      }));
    // Every caller gets this same object (in process, without a copy): frozen, no caller can change it for the others.
    return deepFreeze(create(StaffListResultSchema, { staff }));
  }
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const member of Object.values(value)) deepFreeze(member);
  }
  return value;
}
