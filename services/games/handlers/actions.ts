import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { GamesService } from "../../../gen/pf/games/v1/games_pb.js";
import { AuditPageSchema, ModManageResultSchema, type ModManageResult } from "../../../gen/pf/games/v1/mods_pb.js";
import { newId } from "../../kit/handler/ids.js";
import { decodeCursor, page, pageLimit } from "../../kit/handler/paging.js";
import { invalid } from "../../kit/handler/problem.js";
import type { GamesContext } from "../context.js";
import { auditOf, auditToProto, insertAudit } from "../db/audit.js";
import { installExists, installToProto, lockedInstall, modNotFound } from "../db/installs.js";
import { applyChange, type Change, type Status } from "../domain/installs.js";
import { modChanged } from "../events.js";
import { auditedManager } from "../managers.js";

type ActionHandlers = Pick<
  ServiceImpl<typeof GamesService>,
  "enableMod" | "disableMod" | "revokeMod" | "grantCapability" | "ungrantCapability" | "listModAudit"
>;

/**
 * The manage actions on an install. Each locks the install, applies the
 * rule of domain/installs.ts and, when something changed, writes the install,
 * its audit row and its games.mod.* event in one transaction; an action that
 * changes nothing answers the install as it stands (`changed: false`).
 */
export function actionHandlers(ctx: GamesContext): ActionHandlers {
  /** Who asks (the rule that admitted them: games.proto), and what they ask (held to the contract's rules). */
  async function act(call: HandlerContext, id: string, change: Change, reason = ""): Promise<ModManageResult> {
    const manager = auditedManager(call);
    return ctx.transaction(async (em) => {
      const row = await lockedInstall(em, id);
      const next = applyChange(
        { status: row.status as Status, requested: row.requested, granted: row.granted },
        change,
      );
      if (next === null)
        return create(ModManageResultSchema, {
          result: { case: "install", value: installToProto(row) },
          changed: false,
        });
      const at = ctx.clock.now();
      row.status = next.status;
      row.granted = next.granted;
      row.revision += 1;
      row.updatedAt = at;
      if (change.action === "disabled" || change.action === "revoked") row.statusReason = reason;
      if (change.action === "enabled") row.statusReason = "";
      const capability = "capability" in change ? change.capability : "";
      await insertAudit(em, {
        id: newId("mau"),
        installId: row.id,
        revision: row.revision,
        action: change.action,
        capability,
        ...manager,
        reason,
        status: row.status,
        at,
      });
      await modChanged(em, row, { action: change.action, actor: manager.actor, capability, reason, at });
      return create(ModManageResultSchema, { result: { case: "install", value: installToProto(row) }, changed: true });
    });
  }

  // The contract holds reason to 500 characters and capability to dotted lower-case words.
  return {
    enableMod: (request, call) => act(call, request.id, { action: "enabled" }),
    disableMod: (request, call) => act(call, request.id, { action: "disabled" }, request.reason),
    revokeMod: (request, call) => act(call, request.id, { action: "revoked" }, request.reason),
    grantCapability: (request, call) => act(call, request.id, { action: "granted", capability: request.capability }),
    ungrantCapability: (request, call) =>
      act(call, request.id, { action: "ungranted", capability: request.capability }),

    async listModAudit(request) {
      const limit = pageLimit(request.limit);
      const below = auditCursor(request.cursor);
      const em = ctx.orm.em.fork();
      if (!(await installExists(em, request.id))) throw modNotFound();
      const rows = await auditOf(em, request.id, below, limit + 1);
      const { items, nextCursor } = page(rows, limit, (row) => [row.revision]);
      return create(ModManageResultSchema, {
        result: { case: "audit", value: create(AuditPageSchema, { entries: items.map(auditToProto), nextCursor }) },
      });
    },
  };
}

/** The revision an audit cursor continues below (400 naming `cursor` for one this service did not issue). */
function auditCursor(cursor: string): number | undefined {
  const position = decodeCursor(cursor);
  if (position === undefined) return undefined;
  const [revision] = position;
  if (position.length !== 1 || !Number.isInteger(revision) || (revision as number) < 1)
    throw invalid("cursor", "cursor is not one this service issued");
  return revision as number;
}
