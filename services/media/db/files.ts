import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import { type File, FileSchema } from "../../../gen/pf/media/v1/media_pb.js";
import { sql } from "../../kit/db/sql.js";
import { FileRow } from "./entities.js";

/** What an upload stored, to be recorded. */
export interface StoredFile {
  key: string;
  app: string;
  name: string;
  contentType: string;
  size: number;
  sha256: string;
  uploader: string;
  createdAt: Date;
}

/** Records a file object whose bytes are stored: one statement, without the unit of work's flush around it. */
export async function insertFile(em: EntityManager, file: StoredFile): Promise<void> {
  await sql(
    em,
    `insert into {files} (key, app, name, content_type, size, sha256, uploader, created_at) values (?, ?, ?, ?, ?, ?, ?, ?)`,
    [file.key, file.app, file.name, file.contentType, file.size, file.sha256, file.uploader, file.createdAt],
  );
}

/** A file object by its key, in any namespace (`/f/{key}`), or null. */
export function fileByKey(em: EntityManager, key: string): Promise<FileRow | null> {
  return em.findOne(FileRow, { key });
}

/** The row (or the file just recorded) as the contract's file object. */
export function fileToProto(row: FileRow | StoredFile): File {
  return create(FileSchema, {
    key: row.key,
    app: row.app,
    name: row.name,
    contentType: row.contentType,
    size: BigInt(row.size),
    sha256: row.sha256,
    uploader: row.uploader,
    createdAt: timestampFromDate(row.createdAt),
  });
}
