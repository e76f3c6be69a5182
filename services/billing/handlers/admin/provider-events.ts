import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  AdminResultSchema,
  ProviderEventListSchema,
  type BillingAdminService,
} from "../../../../gen/pf/billing/v1/admin_pb.js";
import { decodeTextCursor, DEFAULT_LIMIT, page } from "../../../kit/handler/paging.js";
import { invalid, problem } from "../../../kit/handler/problem.js";
import type { BillingContext } from "../../context.js";
import {
  EVENT_STATES,
  providerEventById,
  providerEventsPage,
  providerEventToProto,
  type ProviderEventState,
} from "../../db/provider-events.js";
import { reapply } from "../../workers/provider-events.js";

type ProviderEventHandlers = Pick<
  ServiceImpl<typeof BillingAdminService>,
  "listProviderEvents" | "reprocessProviderEvent"
>;

/** Stored provider events for the ledger admin: the list, newest first, and reprocessing. */
export function providerEventHandlers(ctx: BillingContext): ProviderEventHandlers {
  return {
    async listProviderEvents(request) {
      if (request.status !== "" && !EVENT_STATES.includes(request.status as ProviderEventState)) {
        throw invalid("status", `status is one of ${EVENT_STATES.join(", ")}.`);
      }
      const limit = request.limit ?? DEFAULT_LIMIT; // 1-200, declared
      const before = decodeTextCursor(request.cursor, 1)?.[0];
      if (before !== undefined && !/^\d+$/.test(before))
        throw invalid("cursor", "cursor is not one this service issued");
      const rows = await providerEventsPage(
        ctx.orm.em.fork(),
        request.status === "" ? undefined : request.status,
        before === undefined ? undefined : BigInt(before),
        limit + 1,
      );
      const { items, nextCursor } = page(rows, limit, (row) => [row.seq.toString()]);
      return create(AdminResultSchema, {
        result: {
          case: "providerEvents",
          value: create(ProviderEventListSchema, { providerEvents: items.map(providerEventToProto), nextCursor }),
        },
      });
    },

    async reprocessProviderEvent(request) {
      if (!(await reapply(ctx, request.id)))
        throw problem(404, "provider_event.not_found", "There is no such provider event.");
      const row = await providerEventById(ctx.orm.em.fork(), request.id);
      return create(AdminResultSchema, { result: { case: "providerEvent", value: providerEventToProto(row) } });
    },
  };
}
