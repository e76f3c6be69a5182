import { SearchIndexService, SearchService } from "../../gen/pf/search/v1/search_pb.js";
import { defineService } from "../kit/service/module.js";
import { implement } from "../kit/rpc/implementation.js";
import { searchContext } from "./context.js";
import { entities } from "./db/entities.js";
import { Migration20261220000000_search } from "./db/migrations/Migration20261220000000_search.js";
import { Migration20261227000000_search_query_indexes } from "./db/migrations/Migration20261227000000_search_query_indexes.js";
import { Migration20270105000000_search_recent_facets } from "./db/migrations/Migration20270105000000_search_recent_facets.js";
import { Migration20270110000000_search_written_by } from "./db/migrations/Migration20270110000000_search_written_by.js";
import { batchHandlers } from "./handlers/batch.js";
import { ownerHandlers } from "./handlers/owners.js";
import { queryHandlers } from "./handlers/query.js";

/** The search service (spec part 3): one index every service writes its documents into, queried by visibility. */
export const search = defineService({
  key: "search",
  schema: {
    entities,
    migrations: [
      { name: "Migration20261220000000_search", class: Migration20261220000000_search },
      { name: "Migration20261227000000_search_query_indexes", class: Migration20261227000000_search_query_indexes },
      { name: "Migration20270105000000_search_recent_facets", class: Migration20270105000000_search_recent_facets },
      { name: "Migration20270110000000_search_written_by", class: Migration20270110000000_search_written_by },
    ],
  },
  context: searchContext,
  // The in-memory index: built at start, caught up while the host is up.
  workers: [async (ctx) => (ctx.engine.start(), () => ctx.engine.stop())],
  protos: [SearchService, SearchIndexService],
  implementations: (ctx) => [
    implement(SearchService, { ...queryHandlers(ctx), ...ownerHandlers(ctx) }),
    implement(SearchIndexService, batchHandlers(ctx)),
  ],
});
