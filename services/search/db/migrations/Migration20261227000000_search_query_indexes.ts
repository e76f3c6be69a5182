import { Migration } from "@mikro-orm/migrations";

/**
 * Indexes for queries at 200,000 documents. Titles by their beginning, byte-wise: suggestions for a q too short
 * for trigrams (fewer than three letters or digits) read a range of this index instead of every title. The GIN
 * indexes' pending lists capped at 512 kB: every query scans the whole list, and at the default 4 MB a burst of
 * relayed documents added about 8 ms to each query until a vacuum merged it.
 */
export class Migration20261227000000_search_query_indexes extends Migration {
  override up(): void {
    this.addSql(
      `create index documents_title_prefix on documents (title_folded text_pattern_ops) where published and not deleted`,
    );
    for (const index of ["documents_words", "documents_facet_pairs", "documents_titles"])
      this.addSql(`alter index ${index} set (gin_pending_list_limit = 512)`);
  }
}
