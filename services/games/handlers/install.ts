import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { GamesService } from "../../../gen/pf/games/v1/games_pb.js";
import { ModManageResultSchema } from "../../../gen/pf/games/v1/mods_pb.js";
import { advisoryLock } from "../../kit/db/advisory-lock.js";
import { idempotencyOf } from "../../kit/writes/idempotency.js";
import { newId } from "../../kit/handler/ids.js";
import { problem } from "../../kit/handler/problem.js";
import type { GamesContext } from "../context.js";
import { insertAudit } from "../db/audit.js";
import { insertInstall, installToProto, liveInstall, versionRevoked } from "../db/installs.js";
import { readContentPack, readManifest, requirePinnedContent } from "../domain/manifest.js";
import { modChanged } from "../events.js";
import { auditedManager } from "../managers.js";

/**
 * Installing a mod: the manifest and its content pack are checked, the
 * install starts disabled with nothing granted (grants only by explicit
 * approval; the trust tier starts unreviewed and grants nothing), and the
 * install, its audit row and games.mod.installed are one transaction.
 */
export function installHandlers(ctx: GamesContext): Pick<ServiceImpl<typeof GamesService>, "installMod"> {
  return {
    async installMod(request, call) {
      const manager = auditedManager(call);
      // The contract requires the manifest and the content pack, and holds server to a key's shape.
      const manifest = readManifest(request.manifest!, ctx.settings.manifestMaxBytes);
      const pack = readContentPack(request.contentPack!, ctx.settings.contentMaxBytes);
      requirePinnedContent(manifest, pack);
      const once = idempotencyOf(call, request, { scope: `install:${manager.actor}` });
      const scope = { game: manifest.game, server: request.server, modId: manifest.id };
      return ctx.transaction((em) =>
        once.run(em, async () => {
          // Installs of one mod in one scope run one after another: the live-install check never races.
          await advisoryLock(em, `games.install:${scope.game}:${scope.server}:${scope.modId}`);
          const live = await liveInstall(em, scope);
          if (live)
            throw problem(409, "games.mod_installed", `${manifest.id} is installed here already (${live.id}).`, {
              install_id: live.id,
            });
          if (await versionRevoked(em, { ...scope, version: manifest.version }))
            throw problem(
              409,
              "games.mod_revoked",
              `${manifest.id} ${manifest.version} was revoked here for good; install another version.`,
            );
          const at = ctx.clock.now();
          const row = await insertInstall(em, {
            id: newId("mod"),
            ...scope,
            name: manifest.name,
            version: manifest.version,
            status: "disabled",
            trustTier: "unreviewed",
            requested: manifest.capabilities,
            granted: [],
            manifest: manifest.document,
            contentPack: pack.document,
            contentDigest: pack.digest,
            contentSize: pack.size,
            revision: 1,
            statusReason: "",
            installedAt: at,
            updatedAt: at,
          });
          await insertAudit(em, {
            id: newId("mau"),
            installId: row.id,
            revision: 1,
            action: "installed",
            capability: "",
            ...manager,
            reason: "",
            status: row.status,
            at,
          });
          await modChanged(em, row, { action: "installed", actor: manager.actor, at });
          return create(ModManageResultSchema, {
            result: { case: "install", value: installToProto(row) },
            changed: true,
          });
        }),
      );
    },
  };
}
