import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { ReadResultSchema, type SearchQuery, SuggestionSchema } from "../../../gen/pf/search/v1/query_pb.js";
import type { SearchService } from "../../../gen/pf/search/v1/search_pb.js";
import { principalOf } from "../../kit/auth/principal.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import type { SearchContext } from "../context.js";
import { checkQuery, decodePosition, encodePosition, type Query, QueryFault } from "../domain/query.js";
import { SubjectRequired, type Viewer, viewerOf } from "../domain/visibility.js";
import { facetCountsToProto, foundToProto } from "../domain/convert.js";

type QueryHandlers = Pick<ServiceImpl<typeof SearchService>, "search" | "getDocument" | "suggest">;

/** The checked query, a QueryFault answered 400 naming its field. */
function queryOf(request: SearchQuery): Query {
  try {
    return checkQuery(request);
  } catch (error) {
    if (error instanceof QueryFault) throw invalid(error.field, error.message);
    throw error;
  }
}

function positionOf(cursor: string, kind: "ranked" | "recent" | "suggested") {
  try {
    return decodePosition(cursor, kind);
  } catch (error) {
    if (error instanceof QueryFault) throw invalid(error.field, error.message);
    throw error;
  }
}

export function queryHandlers(ctx: SearchContext): QueryHandlers {
  /**
   * Who reads: a service token must name the person it acts for. Anonymous
   * callers were counted by the route's declared rate limit (`query`) before.
   */
  const readerOf = async (call: HandlerContext): Promise<Viewer> => {
    try {
      return viewerOf(principalOf(call));
    } catch (error) {
      if (!(error instanceof SubjectRequired)) throw error;
      throw problem(
        400,
        "search.subject_required",
        "A service queries for a person: send X-PF-Subject (with the X-PF-Groups and X-PF-Entitlements it resolved).",
        { field: "X-PF-Subject" },
      );
    }
  };

  return {
    async search(request, call) {
      const query = queryOf(request);
      const kind = query.q === "" ? "recent" : "ranked";
      const after = positionOf(request.cursor, kind);
      const viewer = await readerOf(call);
      const at = after?.kind === "ranked" ? new Date(after.at) : ctx.clock.now();
      const found = await ctx.engine.search(viewer, query, after, at);
      const rows = found.rows.slice(0, query.limit);
      const last = rows[rows.length - 1];
      const nextCursor =
        found.rows.length <= query.limit
          ? ""
          : encodePosition(
              kind === "ranked"
                ? { kind, at: at.toISOString(), score: last.score, key: last }
                : { kind, publishedAt: last.publishedAt.toISOString(), key: last },
            );
      const facets = facetCountsToProto(found);
      return create(ReadResultSchema, { results: rows.map(foundToProto), facets, nextCursor });
    },

    async getDocument(request, call) {
      // The spec gives this read the query's parameters: checked, and without effect on the one document.
      queryOf({ ...request, owner: "", type: "" });
      const viewer = await readerOf(call);
      const found = await ctx.engine.read(viewer, { owner: request.owner, type: request.type, id: request.id });
      // Missing, invisible, draft and deleted answer alike: nothing tells them apart.
      if (!found) throw problem(404, "search.document.not_found", "No such document.");
      return create(ReadResultSchema, { document: foundToProto(found) });
    },

    async suggest(request, call) {
      const query = queryOf(request);
      const after = positionOf(request.cursor, "suggested");
      const viewer = await readerOf(call);
      if (query.q === "") return create(ReadResultSchema, {});
      const found = await ctx.engine.suggest(viewer, query, after);
      const rows = found.rows.slice(0, query.limit);
      const last = rows[rows.length - 1];
      return create(ReadResultSchema, {
        suggestions: rows.map((row) => create(SuggestionSchema, row)),
        facets: facetCountsToProto(found),
        nextCursor:
          found.rows.length > query.limit ? encodePosition({ kind: "suggested", score: last.score, key: last }) : "",
      });
    },
  };
}
