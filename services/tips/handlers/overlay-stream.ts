import { create, fromJson, type JsonObject } from "@bufbuild/protobuf";
import { timestampNow, type Timestamp } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import {
  OverlayAlertRemovedSchema,
  OverlayAlertSchema,
  OverlayEventSchema,
  OverlayGoalSchema,
  OverlayStreamOpenedSchema,
  type OverlayConfig,
  type OverlayEvent,
  type TipsOverlayService,
} from "../../../gen/pf/tips/v1/overlays_pb.js";
import { problem } from "../../kit/handler/problem.js";
import type { StreamSlots } from "../../kit/rpc/stream-slots.js";
import type { TipsContext } from "../context.js";
import { loadProfile } from "../db/profiles.js";
import { configById, configsOf } from "../db/overlay-configs.js";
import type { OverlayTokenRow } from "../db/overlay-entities.js";
import { isRevoked, tokenBySecretHash } from "../db/overlay-tokens.js";
import { alertsShownAfter, goalViews } from "../db/overlay-views.js";
import { kindName, type OverlayKindName } from "../domain/overlay-configs.js";
import {
  alertOf,
  goalOf,
  isAlert,
  RESUME_LIMIT,
  RESUME_WINDOW_MS,
  resumePoint,
  showsConfig,
} from "../domain/overlay-stream.js";
import { secretHash } from "../../kit/auth/secrets.js";
import { SCOPES } from "../domain/overlay-tokens.js";
import { configToProto } from "./overlay-configs.js";
import type { OverlayHub } from "../live/hub.js";
import type { LiveEvent } from "../live/events.js";
import { EventQueue } from "../live/queue.js";

type StreamHandlers = Pick<ServiceImpl<typeof TipsOverlayService>, "openOverlayStream">;
type Case = NonNullable<OverlayEvent["event"]["case"]>;

function event<C extends Case>(
  id: string,
  occurredAt: Timestamp | undefined,
  kind: C,
  value: Extract<OverlayEvent["event"], { case: C }>["value"],
): OverlayEvent {
  return create(OverlayEventSchema, {
    id,
    occurredAt: occurredAt ?? timestampNow(),
    event: { case: kind, value } as OverlayEvent["event"],
  });
}

const invalidToken = () =>
  problem(401, "overlay_token.invalid", "The overlay token is unknown or revoked; mint a new one.");
const revoked = () => problem(401, "overlay_token.revoked", "The overlay token was revoked; this stream ends.");

/** Queued by an open stream's timer: read the token again. */
const RECHECK = "recheck";

/** The token a stream presents, by the hash of its secret; unknown and revoked tokens are one 401. */
async function tokenOf(em: EntityManager, secret: string): Promise<OverlayTokenRow> {
  if (secret === "")
    throw problem(401, "overlay_token.invalid", "An overlay stream needs its overlay token (?token=…).");
  const row = await tokenBySecretHash(em, secretHash(secret));
  if (!row || row.revokedAt) throw invalidToken();
  return row;
}

/** What the stream shows: the token's scopes, narrowed to one config's kind when it asks for one. */
async function scopesOf(em: EntityManager, token: OverlayTokenRow, configId: string): Promise<Set<OverlayKindName>> {
  const scopes = new Set<OverlayKindName>([
    ...(token.scopeAlerts ? ["alerts" as const] : []),
    ...(token.scopeGoals ? ["goals" as const] : []),
  ]);
  if (configId === "") return scopes;
  const config = await configById(em, configId);
  if (!config || config.creator !== token.creator)
    throw problem(404, "overlay_config.not_found", "There is no such overlay config.");
  const kind = config.kind as OverlayKindName;
  if (!scopes.has(kind))
    throw problem(403, "overlay_token.scope", `This overlay token does not open ${kind} overlays.`);
  return new Set([kind]);
}

/**
 * The overlay stream: the token is checked first (401/403 before
 * any event), then the stream takes its slots (429 when its token or its
 * client's address has as many streams open on this instance as allowed);
 * the live feed is listened to before the first reads, so nothing
 * between them is lost; then the opening snapshot (configs and the goals they
 * show, without ids), the resumed alerts, and the live events in order.
 */
export function overlayStreamHandlers(ctx: TipsContext, hub: OverlayHub, slots: StreamSlots): StreamHandlers {
  return {
    async *openOverlayStream(request, call) {
      const token = await tokenOf(ctx.orm.em.fork(), request.token);
      const scopes = await scopesOf(ctx.orm.em.fork(), token, request.configId);
      // Freed in the finally below, however the stream ends (the client gone included).
      const release = slots.take([
        { name: "tips.stream.token", key: token.id, limit: ctx.settings.streamsPerToken },
        // "" (not through the gateway) counts by token only.
        {
          name: "tips.stream.address",
          key: ctx.clientKeys.of(call.requestHeader),
          limit: ctx.settings.streamsPerAddress,
        },
      ]);
      const queue = new EventQueue<LiveEvent | typeof RECHECK>(call.signal);
      const stop = hub.listen(token.creator, (live) => queue.push(live));
      // The live feed is not durable: should the revocation's event be missed, the token is read again now and then.
      const recheck = setInterval(() => queue.push(RECHECK), ctx.settings.overlayRecheckMs);
      try {
        const em = ctx.orm.em.fork();
        // Read again now that the feed is heard: a revocation between the two reads is either seen here or heard.
        if (await isRevoked(em, token.id)) throw invalidToken();
        const configs = (await configsOf(em, token.creator))
          .filter((row) => showsConfig(scopes, request.configId, { id: row.id, kind: row.kind as OverlayKindName }))
          .map(configToProto);
        const shown = new Map(configs.map((config) => [config.id, config]));
        // Always a first event, so the answer's headers go out at once, even for a creator with nothing to show yet.
        yield event(
          "",
          undefined,
          "opened",
          create(OverlayStreamOpenedSchema, {
            creator: token.creator,
            scopes: [...scopes].map((kind) => SCOPES[kind]),
          }),
        );
        for (const config of configs) yield event("", undefined, "config", config);
        const sentGoals = new Set<string>();
        for (const goal of await goalsOf(em, token.creator, goalIdsOf(shown), sentGoals)) yield goal;
        const replayed = new Set<string>();
        for (const alert of scopes.has("alerts") ? await resumedAlerts(em, ctx, token.creator, call) : []) {
          replayed.add(alert.id);
          yield alert;
        }
        for await (const live of queue) {
          if (live === RECHECK) {
            if (await isRevoked(ctx.orm.em.fork(), token.id)) throw revoked();
            continue;
          }
          if (replayed.has(live.id)) continue;
          if (live.kind === "revoked") {
            if (live.tokenId === token.id) throw revoked();
            continue;
          }
          if (live.kind === "config") {
            if (!showsConfig(scopes, request.configId, { id: live.config.id, kind: kindName(live.config.kind) }))
              continue;
            // A change the opening snapshot already showed (its event arrived after the stream opened) is not news.
            const before = shown.get(live.config.id);
            if (before && before.revision >= live.config.revision) continue;
            shown.set(live.config.id, live.config);
            yield event(live.id, live.occurredAt, "config", live.config);
            // A goal overlay switched to another goal shows its progress at once.
            for (const goal of await goalsOf(ctx.orm.em.fork(), token.creator, goalIdsOf(shown), sentGoals)) yield goal;
            continue;
          }
          if (live.kind === "goal") {
            if (!goalIdsOf(shown).has(live.goal.id)) continue;
            sentGoals.add(live.goal.id);
            yield event(live.id, live.occurredAt, "goal", goalOf(live.goal));
            continue;
          }
          if (!scopes.has("alerts")) continue;
          if (live.kind === "hidden")
            yield event(
              live.id,
              live.occurredAt,
              "alertRemoved",
              create(OverlayAlertRemovedSchema, { interactionId: live.interaction.id }),
            );
          else if (isAlert(live.interaction)) {
            const tts = (await loadProfile(ctx.orm.em.fork(), token.creator))?.textToSpeech;
            yield event(live.id, live.occurredAt, "alert", alertOf(live.interaction, tts));
          }
        }
      } finally {
        clearInterval(recheck);
        stop();
        release();
      }
    },
  };
}

function goalIdsOf(shown: Map<string, OverlayConfig>): Set<string> {
  return new Set([...shown.values()].flatMap((config) => (config.goals?.goalId ? [config.goals.goalId] : [])));
}

/**
 * Progress of the shown goals not sent yet, as the overlays' goal view last
 * heard it; the creator's own goals only (a config may name any goal id).
 */
async function goalsOf(
  em: EntityManager,
  creator: string,
  goalIds: Set<string>,
  sent: Set<string>,
): Promise<OverlayEvent[]> {
  const wanted = [...goalIds].filter((id) => !sent.has(id));
  if (wanted.length === 0) return [];
  const rows = await goalViews(em, creator, wanted);
  return rows.map((row) => {
    sent.add(row.goalId);
    return event("", undefined, "goal", fromJson(OverlayGoalSchema, row.goal as JsonObject));
  });
}

/** Alerts shown after the overlay's Last-Event-ID: the oldest first, at most RESUME_LIMIT, of the last RESUME_WINDOW_MS. */
async function resumedAlerts(
  em: EntityManager,
  ctx: TipsContext,
  creator: string,
  call: HandlerContext,
): Promise<OverlayEvent[]> {
  const after = resumePoint(call.requestHeader.get("last-event-id"));
  if (!after) return [];
  const since = new Date(ctx.clock.now().getTime() - RESUME_WINDOW_MS);
  const rows = await alertsShownAfter(em, creator, after, since, RESUME_LIMIT);
  return rows.map((row) =>
    event(row.eventId, undefined, "alert", fromJson(OverlayAlertSchema, row.alert as JsonObject)),
  );
}
