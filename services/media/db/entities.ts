import { defineEntity, p, type InferEntity } from "@mikro-orm/postgresql";

/** A file object: its bytes are the blob under its key; the row is written only once they all are. */
export const FileRow = defineEntity({
  name: "FileRow",
  tableName: "files",
  indexes: [{ name: "files_by_app", properties: ["app", "createdAt"] }],
  checks: [{ name: "files_size_check", expression: "size >= 0" }],
  properties: {
    key: p.text().primary(),
    app: p.text(),
    name: p.text(),
    contentType: p.text(),
    size: p.bigint(),
    sha256: p.text(),
    uploader: p.text(),
    createdAt: p.datetime(),
  },
});
export type FileRow = InferEntity<typeof FileRow>;

export const entities = [FileRow];
