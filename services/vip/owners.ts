import type { MessageInitShape } from "@bufbuild/protobuf";
import { TipsOwnerService } from "../../gen/pf/tips/v1/owners_pb.js";
import type { OwnerRequestSchema, OwnerResult } from "../../gen/pf/v1/owners_pb.js";
import type { ServiceContext } from "../kit/service/module.js";
import { perkById } from "./db/perks.js";
import { planById } from "./db/plans.js";
import { relayFailure } from "../kit/rpc/relay-failure.js";

/** Who owns an object of one service: a person (`usr_…`) or `network`; "" when that service holds no such object. */
export type OwnerResolver = (kind: string, id: string) => Promise<string>;

/** A client of the ResolveOwner RPC that every service whose resources can be gated implements. */
interface OwnerClient {
  resolveOwner(request: MessageInitShape<typeof OwnerRequestSchema>): Promise<OwnerResult>;
}

/** Asks the owning service (never inside a transaction); its not answering is 503 `<service>.unavailable`. */
function asking(service: string, client: OwnerClient): OwnerResolver {
  return async (kind, id) => {
    try {
      return (await client.resolveOwner({ kind, id })).owner;
    } catch (error) {
      relayFailure(service, error);
    }
  };
}

/**
 * The services whose resources membership rules can gate, by service key,
 * each with how to learn who owns one: this service's own plans and perks
 * from its database, other services through their ResolveOwner RPC (the
 * module holds each one's capability). A service whose resources can be gated
 * implements ResolveOwner and is listed here.
 */
export function ownerResolvers(base: ServiceContext): ReadonlyMap<string, OwnerResolver> {
  const own: OwnerResolver = async (kind, id) => {
    const em = base.orm.em.fork();
    if (kind === "plan") return (await planById(em, id))?.owner ?? "";
    if (kind === "perk") return (await perkById(em, id))?.owner ?? "";
    return "";
  };
  return new Map([
    ["vip", own],
    ["tips", asking("tips", base.client(TipsOwnerService))],
  ]);
}
