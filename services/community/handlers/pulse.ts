import { create } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  type PulseService,
  PulseReadResultSchema,
  PulseWriteResultSchema,
} from "../../../gen/pf/community/v1/pulse_pb.js";
import { principalOf } from "../../kit/auth/principal.js";
import { decodeTextCursor, page, pageLimit } from "../../kit/handler/paging.js";
import { problem } from "../../kit/handler/problem.js";
import { answerStatus } from "../../kit/handler/status.js";
import { requireUrl } from "../../kit/handler/urls.js";
import type { CommunityContext } from "../context.js";
import { changePulseItem, insertPulseItem, pulseItemOfRef, pulseItemToProto, pulsePage } from "../db/pulse.js";
import { pulseProvenance, requireOccurredAt, requirePublic } from "../domain/pulse.js";
import { requireRef } from "../domain/threads.js";
import { requireTitle } from "../domain/text.js";

type PulseHandlers = Pick<ServiceImpl<typeof PulseService>, "getPulse" | "publishPulseItem" | "retractPulseItem">;

/** Only a service's own entities: the ref's service must be the caller's. */
const requireOwnRef = (service: string | undefined, ref: { service: string }) => {
  if (ref.service !== service)
    throw problem(403, "pulse.foreign_ref", "A service publishes and retracts pulse items of its own entities only.");
};

/** The pulse: public activity, newest first; services publish and retract their own entities' items. */
export function pulseHandlers(ctx: CommunityContext): PulseHandlers {
  return {
    async getPulse(request, call) {
      const limit = pageLimit(request.limit);
      const after = decodeTextCursor(request.cursor, 2) as [string, string] | undefined;
      return ctx.transaction(async (em) => {
        const rows = await pulsePage(em, after, limit + 1);
        const { items, nextCursor } = page(rows, limit, (row) => [row.occurredAt.toISOString(), row.id]);
        return create(PulseReadResultSchema, { items: items.map((row) => pulseItemToProto(row)), nextCursor });
      });
    },

    async publishPulseItem(request, call) {
      const principal = principalOf(call);
      const ref = requireRef("ref", request.ref);
      requireOwnRef(principal.service, ref);
      requirePublic(request.visibility);
      const title = requireTitle("title", request.title, 300);
      const url = requireUrl("url", request.url).toString();
      const { origin, actor } = pulseProvenance(request.origin, principal.origin === "ai", principal.actingSubject);
      const at = ctx.clock.now();
      // The contract requires occurred_at.
      const occurredAt = requireOccurredAt(timestampDate(request.occurredAt!), at);
      return ctx.transaction(async (em) => {
        const created = await insertPulseItem(em, { ref, title, url, origin, actor, occurredAt, at });
        const row = (await pulseItemOfRef(em, ref, true))!;
        if (!created) {
          // Provenance stands: origin, actor and occurred_at stay the first record's; a retracted ref comes back.
          await changePulseItem(em, row, { title, url, updatedAt: at, retractedAt: null });
          answerStatus(call, 200);
        }
        return create(PulseWriteResultSchema, { item: pulseItemToProto(row, true) });
      });
    },

    async retractPulseItem(request, call) {
      const ref = requireRef(
        "ref",
        { service: request.service, kind: request.type, id: request.id },
        { service: "service", kind: "type", id: "id" },
      );
      requireOwnRef(principalOf(call).service, ref);
      return ctx.transaction(async (em) => {
        const row = await pulseItemOfRef(em, ref, true);
        if (!row) throw problem(404, "pulse.not_found", "No pulse item for this ref.");
        await changePulseItem(em, row, { retractedAt: row.retractedAt ?? ctx.clock.now() });
        return create(PulseWriteResultSchema, { item: pulseItemToProto(row, true) });
      });
    },
  };
}
