import { GamesService } from "../../gen/pf/games/v1/games_pb.js";
import { defineService } from "../kit/service/module.js";
import { implement } from "../kit/rpc/implementation.js";
import { gamesContext } from "./context.js";
import { entities } from "./db/entities.js";
import { Migration20261215000000_games } from "./db/migrations/Migration20261215000000_games.js";
import { actionHandlers } from "./handlers/actions.js";
import { installHandlers } from "./handlers/install.js";
import { modReadHandlers } from "./handlers/mods.js";
import { networkStaff } from "./managers.js";

/** The game-mods service (spec part 3): mod installs with capability grants, audited, published as games.mod.*. */
export const games = defineService({
  key: "games",
  schema: {
    entities,
    migrations: [{ name: "Migration20261215000000_games", class: Migration20261215000000_games }],
  },
  context: gamesContext,
  protos: [GamesService],
  implementations(ctx) {
    return [implement(GamesService, { ...modReadHandlers(ctx), ...installHandlers(ctx), ...actionHandlers(ctx) })];
  },
  // The declared `network_staff` relation, which admits a person's own token to manage.
  relations: networkStaff,
  // Its token's capability: network's staff list, which the `network_staff` resolver reads.
  holds: ["network.staff.read"],
});
