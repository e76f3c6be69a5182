import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { GamesService } from "../../../gen/pf/games/v1/games_pb.js";
import { ModPageSchema, ModReadResultSchema } from "../../../gen/pf/games/v1/mods_pb.js";
import { decodeTextCursor, page, pageLimit } from "../../kit/handler/paging.js";
import type { GamesContext } from "../context.js";
import { readInstall, readInstalls } from "../db/installs.js";
import { statusWord } from "../domain/vocabulary.js";

type ModReadHandlers = Pick<ServiceImpl<typeof GamesService>, "listMods" | "getMod">;

/** The public reads: anyone, no token needed. Audit actors are not shown here (the audit route is manage-only). */
export function modReadHandlers(ctx: GamesContext): ModReadHandlers {
  return {
    async listMods(request) {
      const limit = pageLimit(request.limit);
      // game and server are held to 64 characters, status to ModStatus's values, by the contract.
      const filters = {
        game: request.game,
        server: request.server,
        status: statusWord(request.status),
        before: decodeTextCursor(request.cursor, 1)?.[0] ?? "",
      };
      const { items, nextCursor } = page(await readInstalls(ctx, filters, limit + 1), limit, (mod) => [mod.id]);
      return create(ModReadResultSchema, {
        result: { case: "mods", value: create(ModPageSchema, { mods: items, nextCursor }) },
      });
    },

    async getMod(request) {
      return create(ModReadResultSchema, { result: { case: "install", value: await readInstall(ctx, request.id) } });
    },
  };
}
