import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { CodesService } from "../../../gen/pf/codes/v1/codes_pb.js";
import { ReleaseManageResultSchema } from "../../../gen/pf/codes/v1/releases_pb.js";
import { principalOf } from "../../kit/auth/principal.js";
import { idempotencyOf } from "../../kit/writes/idempotency.js";
import { newId } from "../../kit/handler/ids.js";
import { problem } from "../../kit/handler/problem.js";
import type { ServiceContext } from "../../kit/service/module.js";
import type { ReleaseRow } from "../db/entities.js";
import {
  changeRelease,
  insertRelease,
  releaseAnswer,
  releaseById,
  releaseForUpdate,
  releaseOfVersion,
} from "../db/releases.js";
import { trustOf } from "../db/trust.js";
import { validateManifest } from "../domain/manifests.js";
import {
  appMismatch,
  appOfSubject,
  checkReplacement,
  compatibilityOf,
  requireReason,
  transition,
  versionKey,
  type Status,
} from "../domain/releases.js";
import { releaseDeprecated, releasePublished, releaseRevoked } from "../events.js";

type ManageHandlers = Pick<
  ServiceImpl<typeof CodesService>,
  "createRelease" | "publishRelease" | "deprecateRelease" | "revokeRelease"
>;

/** "Drafts are never returned": another app's release never published answers 404 like a missing one. */
const notFound = (id: string) => problem(404, "codes.release_not_found", `There is no release ${id}.`, { id });

/**
 * Manage: an app manages its own releases with its own token (audience
 * `codes`, enforced from the contract); here, that the token's sub is
 * app:<the release's app>.
 */
export function manageHandlers(ctx: ServiceContext): ManageHandlers {
  /** The app the token speaks for; a person's or service's token manages nothing. */
  const tokenApp = (call: HandlerContext, app: string) => {
    const own = appOfSubject(principalOf(call).sub);
    if (own !== app) throw appMismatch(app);
    return own;
  };

  /** The token's own release, locked for the action; another app's answers 403, or 404 while never published. */
  const ownRelease = async (em: EntityManager, call: HandlerContext, id: string) => {
    const row = await releaseForUpdate(em, id);
    const own = appOfSubject(principalOf(call).sub);
    if (!row || (row.app !== own && row.publishedAt === null)) throw notFound(id);
    if (row.app !== own) throw appMismatch(row.app);
    return row;
  };

  const answer = async (em: EntityManager, row: ReleaseRow) =>
    create(ReleaseManageResultSchema, { release: releaseAnswer(row, (await trustOf(em, row.app)).tier) });

  /** Applies one action to the token's own release, with its event, in one transaction. */
  const act = (
    call: HandlerContext,
    id: string,
    action: "publish" | "deprecate" | "revoke",
    change: (em: EntityManager, row: ReleaseRow, at: Date) => Promise<void> | void,
  ) =>
    ctx.transaction(async (em) => {
      const row = await ownRelease(em, call, id);
      const wasPublic = row.publishedAt !== null;
      row.status = transition(row.status as Status, action);
      await change(em, row, ctx.clock.now());
      await changeRelease(em, row);
      const result = await answer(em, row);
      if (action === "publish") await releasePublished(em, result.release!);
      if (action === "deprecate") await releaseDeprecated(em, result.release!);
      // A draft revoked unpublished was never public: nothing to tell.
      if (action === "revoke" && wasPublic) await releaseRevoked(em, result.release!);
      return result;
    });

  return {
    async createRelease(request, call) {
      // The contract's rules hold app to its shape and require a manifest.
      const app = tokenApp(call, request.app);
      const manifest = validateManifest(request.manifest!);
      const compatibility = compatibilityOf(request.compatibility, manifest.compatibility);
      const key = versionKey(manifest.version);
      const once = idempotencyOf(call, request, { scope: `release:${app}` });
      return ctx.transaction((em) =>
        once.run(em, async () => {
          const taken = await releaseOfVersion(em, app, key);
          const row = taken
            ? null
            : await insertRelease(em, {
                id: newId("rel"),
                app,
                kind: manifest.kind,
                version: manifest.version,
                versionKey: key,
                compatibility,
                manifest: request.manifest!,
                status: "draft",
                createdAt: ctx.clock.now(),
              });
          // The app's own release of that version (a concurrent create that won the key has none to name).
          if (!row) {
            throw problem(409, "codes.version_exists", `${app} has a release of version ${manifest.version} already.`, {
              version: manifest.version,
              ...(taken ? { release: taken.id } : {}),
            });
          }
          return answer(em, row);
        }),
      );
    },

    publishRelease(request, call) {
      return act(call, request.id, "publish", (_em, row, at) => {
        row.publishedAt = at;
      });
    },

    deprecateRelease(request, call) {
      const reason = requireReason(request.reason);
      return act(call, request.id, "deprecate", async (em, row, at) => {
        if (request.replacement !== "") {
          checkReplacement(row, request.replacement, await releaseById(em, request.replacement));
        }
        Object.assign(row, { deprecationReason: reason, replacement: request.replacement || null, deprecatedAt: at });
      });
    },

    revokeRelease(request, call) {
      const reason = request.reason.trim();
      return act(call, request.id, "revoke", (_em, row, at) => {
        Object.assign(row, { revocationReason: reason || null, revokedAt: at });
      });
    },
  };
}
