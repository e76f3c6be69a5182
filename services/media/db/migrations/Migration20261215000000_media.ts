import { Migration } from "@mikro-orm/migrations";

/** The media schema: file objects, their blobs kept in the blob store under the same key. */
export class Migration20261215000000_media extends Migration {
  override up(): void {
    this.addSql(`create table files (
      key text primary key,
      app text not null,
      name text not null,
      content_type text not null,
      size bigint not null,
      sha256 text not null,
      uploader text not null,
      created_at timestamptz not null,
      constraint files_size_check check (size >= 0)
    )`);
    this.addSql(`create index files_by_app on files (app, created_at)`);
  }
}
