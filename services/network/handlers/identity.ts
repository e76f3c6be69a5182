import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  IdentityQuerySchema,
  ResolutionSchema,
  ResolveResultSchema,
  type IdentityQuery,
  type NetworkService,
  type Resolution,
} from "../../../gen/pf/network/v1/network_pb.js";
import type { ServiceContext } from "../../kit/service/module.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import { linkedSubjects, linkKey } from "../db/legacy-ids.js";
import { subjectRefs } from "../db/subject-refs.js";

/** Identity resolve: a subject, or a legacy service-local id, to its canonical SubjectRef. */
export function identityHandlers(
  ctx: ServiceContext,
): Pick<ServiceImpl<typeof NetworkService>, "resolveIdentity" | "resolveIdentityBatch"> {
  return {
    async resolveIdentity(request) {
      const query = create(IdentityQuerySchema, {
        subject: request.subject,
        service: request.service,
        localId: request.localId,
      });
      const [resolution] = await resolve(ctx, [checked(query, "")]);
      if (!resolution.found) throw problem(404, "identity.not_found", "Nothing is known by that id.");
      return create(ResolveResultSchema, { results: [resolution] });
    },

    async resolveIdentityBatch(request) {
      const queries = request.queries.map((query, i) => checked(query, `queries[${i}].`));
      return create(ResolveResultSchema, { results: await resolve(ctx, queries) });
    },
  };
}

/** A query names a subject, or a service and its local id, never both (the contract holds the subject's shape). */
function checked(query: IdentityQuery, prefix: string): IdentityQuery {
  if (query.subject !== "") {
    if (query.service !== "" || query.localId !== "")
      throw invalid(`${prefix}subject`, "Give a subject, or a service and local_id, not both.");
  } else if (query.service === "" || query.localId === "") {
    throw invalid(`${prefix}local_id`, "Give a subject, or a service and local_id.");
  }
  return query;
}

async function resolve(ctx: ServiceContext, queries: IdentityQuery[]): Promise<Resolution[]> {
  const linked = await linkedSubjects(
    ctx,
    queries.filter((q) => q.subject === ""),
  );
  const ids = queries.map((q) => q.subject || linked.get(linkKey(q)) || "");
  const refs = await subjectRefs(
    ctx,
    ids.filter((id) => id !== ""),
  );
  return queries.map((query, i) => {
    const ref = ids[i] ? refs.get(ids[i]) : undefined;
    // A subject id is known once it has a stored display; a legacy id once it is linked.
    const found = ref !== undefined && (query.subject === "" || ref.display !== undefined);
    return create(ResolutionSchema, { query, found, subject: found ? ref : undefined });
  });
}
