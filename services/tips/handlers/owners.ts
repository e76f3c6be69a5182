import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { TipsOwnerService } from "../../../gen/pf/tips/v1/owners_pb.js";
import { OwnerResultSchema } from "../../../gen/pf/v1/owners_pb.js";
import type { TipsContext } from "../context.js";
import { goalById } from "../db/goals.js";
import { profileRow } from "../db/profiles.js";

/** The kinds of tips objects vip's rules may gate, each with its owner: the creator, whatever the object's state (private, closed, page off). */
const OWNERS = new Map<string, (em: EntityManager, id: string) => Promise<string | undefined>>([
  ["goal", async (em, id) => (await goalById(em, id))?.creator],
  ["profile", async (em, creator) => (await profileRow(em, creator))?.creator],
]);

/** Who owns a tips object (internal, vip only): empty for no such object or a kind tips does not hold. */
export function ownerHandlers(ctx: TipsContext): ServiceImpl<typeof TipsOwnerService> {
  return {
    async resolveOwner({ kind, id }) {
      const owner = await OWNERS.get(kind)?.(ctx.orm.em.fork(), id);
      return create(OwnerResultSchema, { owner: owner ?? "" });
    },
  };
}
