import { p } from "@mikro-orm/postgresql";
import type { AuthorColumns } from "../auth/authorship.js";

/**
 * Who wrote a row, as entity properties: the kit's author columns (`author_kind`, `author`, `workflow`, `run_id`,
 * `stub_provider`, `requested_by`), spread into a `defineEntity`'s properties. `authorColumns(author)` fills them,
 * `authorFromColumns(row)` reads them back.
 */
export const authorProperties = () => ({
  authorKind: p.text().$type<AuthorColumns["authorKind"]>(),
  author: p.text(),
  workflow: p.text().nullable(),
  runId: p.text().nullable(),
  stubProvider: p.boolean(),
  requestedBy: p.text().nullable(),
});
