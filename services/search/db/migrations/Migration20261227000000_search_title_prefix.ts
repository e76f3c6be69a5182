import { Migration } from "@mikro-orm/migrations";

/**
 * Titles by their beginning, byte-wise: suggestions for a q too short for trigrams (fewer than three letters or
 * digits) read a range of this index instead of every title.
 */
export class Migration20261227000000_search_title_prefix extends Migration {
  override up(): void {
    this.addSql(
      `create index documents_title_prefix on documents (title_folded text_pattern_ops) where published and not deleted`,
    );
  }
}
