import { Migration } from "@mikro-orm/migrations";
import { immutableTriggerSql } from "../../../kit/revisions/immutable.js";

/**
 * Summary revisions' contents immutable in the database (kit/revisions): only
 * the review state, the split's flag and publication change in place. The
 * columns are written out here, as they stood when this landed.
 */
export class Migration20261228000000_reviews_summary_contents extends Migration {
  override up(): void {
    const mutable = ["state", "reviewed_by", "reviewed_at", "approved", "review_note", "flag", "published_at"];
    for (const sql of immutableTriggerSql("summary_revisions", { mutable })) this.addSql(sql);
  }
}
