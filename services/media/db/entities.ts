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

/** What an app namespace holds against its quota: its files, and what its open uploads reserved. */
export const AppUsageRow = defineEntity({
  name: "AppUsageRow",
  tableName: "app_usage",
  checks: [
    { name: "app_usage_bytes_check", expression: "bytes >= 0" },
    { name: "app_usage_files_check", expression: "files >= 0" },
  ],
  properties: {
    app: p.text().primary(),
    bytes: p.bigint(),
    files: p.integer(),
  },
});
export type AppUsageRow = InferEntity<typeof AppUsageRow>;

/**
 * An upload under way, written before its first byte is stored: the key its blob will have and what it reserved of
 * its namespace's quota. Its file row replaces it; a crash leaves it, and the sweep removes its blob and reservation.
 */
export const UploadRow = defineEntity({
  name: "UploadRow",
  tableName: "uploads",
  indexes: [{ name: "uploads_by_touched_at", properties: ["touchedAt"] }],
  checks: [{ name: "uploads_reserved_check", expression: "reserved >= 0" }],
  properties: {
    key: p.text().primary(),
    app: p.text(),
    reserved: p.bigint(),
    /** When it last reserved (it does as its bytes arrive): one untouched for long is abandoned. */
    touchedAt: p.datetime(),
    /** Set by the sweep before it removes the blob: the upload can no longer settle. */
    abandoned: p.boolean().default(false),
  },
});
export type UploadRow = InferEntity<typeof UploadRow>;

export const entities = [FileRow, AppUsageRow, UploadRow];
