import { defineEntity, p, type InferEntity } from "@mikro-orm/postgresql";

/**
 * A write search refused, kept for its owner. The documents table has no
 * entity: its text vector and trigram and partial GIN indexes are beyond what
 * the ORM's schema diff describes, so the migration alone defines it and its
 * queries are SQL in db/ (as are these, for one style).
 */
export const RejectionRow = defineEntity({
  name: "RejectionRow",
  tableName: "rejections",
  indexes: [{ name: "rejections_by_owner", properties: ["owner", "rejectionId"] }],
  properties: {
    rejectionId: p.text().primary(),
    owner: p.text(),
    type: p.text(),
    id: p.text(),
    revision: p.bigint(),
    deletion: p.boolean(),
    code: p.text(),
    detail: p.text(),
    rejectedAt: p.datetime(),
  },
});
export type RejectionRow = InferEntity<typeof RejectionRow>;

export const entities = [RejectionRow];
