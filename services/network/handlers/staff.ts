import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { StaffListResultSchema, type NetworkService } from "../../../gen/pf/network/v1/network_pb.js";
import type { ServiceContext } from "../../kit/module.js";
import { StaffMember } from "../db/entities.js";
import { subjectRefs } from "../db/subject-refs.js";
import { byRank, roleOf } from "../domain/staff.js";

/** The staff list: who moderates, for owning services to show or to route a report. */
export function staffHandlers(ctx: ServiceContext): Pick<ServiceImpl<typeof NetworkService>, "listStaff"> {
  return {
    async listStaff() {
      const em = ctx.orm.em.fork();
      const members = await em.find(StaffMember, {});
      const refs = await subjectRefs(em, members.map((m) => m.subject));
      const staff = members
        .map((m) => ({ role: roleOf(m.role), subject: m.subject, capabilities: m.capabilities, updatedAt: m.updatedAt }))
        .sort(byRank)
        .map((m) => ({ subject: refs.get(m.subject), role: m.role, capabilities: m.capabilities, updatedAt: timestampFromDate(m.updatedAt) }));
      return create(StaffListResultSchema, { staff });
    },
  };
}
