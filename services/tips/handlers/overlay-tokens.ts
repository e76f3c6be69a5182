import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  OverlayTokenListSchema,
  OverlayTokenResultSchema,
  OverlayTokenSchema,
  type OverlayToken,
  type TipsOverlayService,
} from "../../../gen/pf/tips/v1/overlays_pb.js";
import { actingPerson } from "../../kit/auth/principal.js";
import { requireBelowCap } from "../../kit/writes/caps.js";
import { decodeTextCursor, page, pageLimit } from "../../kit/handler/paging.js";
import { problem } from "../../kit/handler/problem.js";
import type { TipsContext } from "../context.js";
import type { OverlayTokenRow } from "../db/overlay-entities.js";
import { insertToken, liveTokenCount, lockToken, revokeToken, tokensOf } from "../db/overlay-tokens.js";
import { newSecret, secretHash } from "../../kit/auth/secrets.js";
import { requestedScopes, scopesOf, SECRET_PREFIX } from "../domain/overlay-tokens.js";
import { tokenRevoked } from "../events.js";

type TokenHandlers = Pick<
  ServiceImpl<typeof TipsOverlayService>,
  "listOverlayTokens" | "createOverlayToken" | "revokeOverlayToken"
>;

export function tokenToProto(row: OverlayTokenRow): OverlayToken {
  return create(OverlayTokenSchema, {
    id: row.id,
    creator: row.creator,
    scopes: scopesOf(row),
    label: row.label,
    secretHint: row.secretHint,
    createdAt: timestampFromDate(row.createdAt),
    revokedAt: row.revokedAt ? timestampFromDate(row.revokedAt) : undefined,
  });
}

/**
 * Overlay tokens of the acting creator: minted with scopes, the secret
 * answered once and only its SHA-256 kept; listed without secrets; revoked
 * for good (idempotent), which ends every stream using the token at once
 * (tips.overlay_token.revoked). Another creator's token answers 404.
 */
export function overlayTokenHandlers(ctx: TipsContext): TokenHandlers {
  return {
    async listOverlayTokens(request, call) {
      const creator = actingPerson(call);
      const limit = pageLimit(request.limit);
      const before = decodeTextCursor(request.cursor, 1)?.[0];
      const rows = await tokensOf(ctx.orm.em.fork(), creator, request.includeRevoked, before, limit + 1);
      const { items, nextCursor } = page(rows, limit, (row) => [row.id]);
      return create(OverlayTokenResultSchema, {
        result: {
          case: "tokens",
          value: create(OverlayTokenListSchema, { tokens: items.map(tokenToProto), nextCursor }),
        },
      });
    },

    async createOverlayToken(request, call) {
      const creator = actingPerson(call);
      const scopes = requestedScopes(request.scopes);
      const label = request.label.trim();
      const secret = newSecret(SECRET_PREFIX);
      call.responseHeader.set("cache-control", "no-store");
      const limit = ctx.settings.overlayTokensPerCreator;
      const row = await ctx.transaction(async (em) => {
        // A revoked token opens nothing and takes no room.
        await requireBelowCap(
          em,
          {
            name: "tips.overlay_tokens",
            owner: creator,
            limit,
            code: "overlay_token.limit",
            detail: `A creator keeps at most ${limit} live overlay tokens; revoke one to make room.`,
          },
          () => liveTokenCount(em, creator),
        );
        return insertToken(em, {
          creator,
          scopeAlerts: scopes.has("alerts"),
          scopeGoals: scopes.has("goals"),
          label,
          secretHash: secretHash(secret),
          secretHint: secret.slice(-4),
          createdAt: ctx.clock.now(),
          revokedAt: null,
        });
      });
      return create(OverlayTokenResultSchema, { result: { case: "token", value: tokenToProto(row) }, secret });
    },

    async revokeOverlayToken(request, call) {
      const creator = actingPerson(call);
      const row = await ctx.transaction(async (em) => {
        const token = await lockToken(em, request.id);
        if (!token || token.creator !== creator)
          throw problem(404, "overlay_token.not_found", "There is no such overlay token.");
        if (token.revokedAt) return token;
        const at = ctx.clock.now();
        await revokeToken(em, token, at);
        await tokenRevoked(em, token, at);
        return token;
      });
      return create(OverlayTokenResultSchema, { result: { case: "token", value: tokenToProto(row) } });
    },
  };
}
