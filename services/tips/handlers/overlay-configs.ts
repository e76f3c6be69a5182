import { create, fromJson, toJson, type JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import {
  AlertSettingsSchema,
  GoalSettingsSchema,
  OverlayConfigListSchema,
  OverlayConfigResultSchema,
  OverlayConfigSchema,
  type AlertSettings,
  type GoalSettings,
  type OverlayConfig,
  type TipsOverlayService,
} from "../../../gen/pf/tips/v1/overlays_pb.js";
import { actingPerson } from "../../kit/auth/principal.js";
import { requireBelowCap } from "../../kit/writes/caps.js";
import { problem } from "../../kit/handler/problem.js";
import { checkRevision, ifMatchOf } from "../../kit/handler/revisions.js";
import type { TipsContext } from "../context.js";
import { goalNotFound, goalOwner } from "../db/goals.js";
import { changeConfig, configById, configCount, configsOf, insertConfig } from "../db/overlay-configs.js";
import type { OverlayConfigRow } from "../db/overlay-entities.js";
import {
  configName,
  defaultSection,
  KINDS,
  kindName,
  MAX_CONFIGS,
  sectionOf,
  type OverlayKindName,
} from "../domain/overlay-configs.js";
import { configChanged } from "../events.js";

type ConfigHandlers = Pick<
  ServiceImpl<typeof TipsOverlayService>,
  "listOverlayConfigs" | "createOverlayConfig" | "getOverlayConfig" | "updateOverlayConfig"
>;

const JSON_OPTIONS = { useProtoFieldName: true } as const;

export function configToProto(row: OverlayConfigRow): OverlayConfig {
  const kind = row.kind as OverlayKindName;
  return create(OverlayConfigSchema, {
    id: row.id,
    creator: row.creator,
    kind: KINDS[kind],
    name: row.name,
    alerts: kind === "alerts" ? fromJson(AlertSettingsSchema, row.settings as JsonObject) : undefined,
    goals: kind === "goals" ? fromJson(GoalSettingsSchema, row.settings as JsonObject) : undefined,
    revision: row.revision,
    createdAt: timestampFromDate(row.createdAt),
    updatedAt: timestampFromDate(row.updatedAt),
  });
}

function settingsJson(kind: OverlayKindName, section: AlertSettings | GoalSettings): Record<string, unknown> {
  return kind === "alerts"
    ? (toJson(AlertSettingsSchema, section as AlertSettings, JSON_OPTIONS) as Record<string, unknown>)
    : (toJson(GoalSettingsSchema, section as GoalSettings, JSON_OPTIONS) as Record<string, unknown>);
}

const notFound = () => problem(404, "overlay_config.not_found", "There is no such overlay config.");

function answer(row: OverlayConfigRow, call: HandlerContext) {
  call.responseHeader.set("etag", `"${row.revision}"`);
  return create(OverlayConfigResultSchema, { result: { case: "config", value: configToProto(row) } });
}

/**
 * Overlay configs of the acting creator (own user token, or a service acting
 * for the creator). Another creator's config answers 404 as a missing one.
 * Every create and edit publishes tips.overlay_config.changed, which open
 * streams on every instance pass on at once.
 */
export function overlayConfigHandlers(ctx: TipsContext): ConfigHandlers {
  return {
    async listOverlayConfigs(_request, call) {
      const creator = actingPerson(call);
      const rows = await configsOf(ctx.orm.em.fork(), creator, MAX_CONFIGS);
      return create(OverlayConfigResultSchema, {
        result: { case: "configs", value: create(OverlayConfigListSchema, { configs: rows.map(configToProto) }) },
      });
    },

    async createOverlayConfig(request, call) {
      const creator = actingPerson(call);
      const kind = kindName(request.kind);
      const name = configName(request.name ?? "");
      const section = sectionOf(kind, request) ?? defaultSection(kind);
      const settings = settingsJson(kind, section);
      const row = await ctx.transaction(async (em) => {
        await requireBelowCap(
          em,
          {
            name: "tips.overlay_configs",
            owner: creator,
            limit: MAX_CONFIGS,
            code: "overlay_config.limit",
            detail: `A creator keeps at most ${MAX_CONFIGS} overlay configs; edit one instead.`,
          },
          () => configCount(em, creator),
        );
        await requireOwnGoal(em, kind, section, creator);
        const at = ctx.clock.now();
        const created = await insertConfig(em, {
          creator,
          kind,
          name,
          settings,
          revision: 1n,
          createdAt: at,
          updatedAt: at,
        });
        await configChanged(em, configToProto(created), at);
        return created;
      });
      return answer(row, call);
    },

    async getOverlayConfig(request, call) {
      const creator = actingPerson(call);
      const row = await configById(ctx.orm.em.fork(), request.id);
      if (!row || row.creator !== creator) throw notFound();
      return answer(row, call);
    },

    async updateOverlayConfig(request, call) {
      const creator = actingPerson(call);
      const ifMatch = ifMatchOf(call);
      const name = request.name === undefined ? undefined : configName(request.name);
      const row = await ctx.transaction(async (em) => {
        const current = await configById(em, request.id, true);
        if (!current || current.creator !== creator) throw notFound();
        checkRevision(current.revision, request.expectedRevision, ifMatch);
        const kind = current.kind as OverlayKindName;
        const section = sectionOf(kind, request);
        if (section) await requireOwnGoal(em, kind, section, creator);
        const at = ctx.clock.now();
        await changeConfig(em, current, {
          ...(name !== undefined && { name }),
          ...(section && { settings: settingsJson(kind, section) }),
          revision: current.revision + 1n,
          updatedAt: at,
        });
        await configChanged(em, configToProto(current), at);
        return current;
      });
      return answer(row, call);
    },
  };
}

/** A goals config shows one of its creator's own goals: another's, or none, is 404 goal.not_found as a missing one. */
async function requireOwnGoal(
  em: EntityManager,
  kind: OverlayKindName,
  section: AlertSettings | GoalSettings,
  creator: string,
): Promise<void> {
  if (kind !== "goals") return;
  if ((await goalOwner(em, (section as GoalSettings).goalId)) !== creator) throw goalNotFound();
}
