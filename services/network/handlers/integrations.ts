import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import { GithubTokenResultSchema, type NetworkService } from "../../../gen/pf/network/v1/network_pb.js";
import { problem } from "../../kit/handler/problem.js";
import type { NetworkContext } from "../context.js";
import { settingOf } from "../db/settings.js";

export const GITHUB_TOKEN_SETTING = "integrations.github.token";
/** The environment setting the owner may use instead of the admin panel. */
export const GITHUB_TOKEN_ENV = "PF_NETWORK_GITHUB_TOKEN";
const SCOPE = "public_repo:read";

/** The current code-hosting token: the admin setting first, then the environment. */
export async function githubToken(ctx: NetworkContext, em: EntityManager) {
  const setting = await settingOf(em, GITHUB_TOKEN_SETTING);
  if (setting) {
    return create(GithubTokenResultSchema, {
      token: ctx.sealer.open(setting.value),
      source: "admin",
      scope: SCOPE,
      updatedAt: timestampFromDate(setting.updatedAt),
    });
  }
  const fromEnv = ctx.config.env[GITHUB_TOKEN_ENV];
  if (fromEnv) return create(GithubTokenResultSchema, { token: fromEnv, source: "environment", scope: SCOPE });
  return undefined;
}

/** The code-hosting token for internal readers; never to apps or mods (enforced from the proto options). */
export function integrationHandlers(ctx: NetworkContext): Pick<ServiceImpl<typeof NetworkService>, "getGithubToken"> {
  return {
    async getGithubToken(_request, call) {
      const token = await githubToken(ctx, ctx.orm.em.fork());
      if (!token)
        throw problem(404, "integration.github.not_configured", "The owner has not set a code-hosting token.");
      call.responseHeader.set("cache-control", "no-store");
      return token;
    },
  };
}
