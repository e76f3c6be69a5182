import { Migration } from "@mikro-orm/migrations";

/** Per-app quotas: each namespace's usage, and the uploads under way that reserved part of it. */
export class Migration20261216000000_media_quotas extends Migration {
  override up(): void {
    this.addSql(`create table app_usage (
      app text primary key,
      bytes bigint not null,
      files integer not null,
      constraint app_usage_bytes_check check (bytes >= 0),
      constraint app_usage_files_check check (files >= 0)
    )`);
    // What the namespaces already hold.
    this.addSql(`insert into app_usage (app, bytes, files) select app, sum(size), count(*) from files group by app`);
    this.addSql(`create table uploads (
      key text primary key,
      app text not null,
      reserved bigint not null,
      touched_at timestamptz not null,
      abandoned boolean not null default false,
      constraint uploads_reserved_check check (reserved >= 0)
    )`);
    this.addSql(`create index uploads_by_touched_at on uploads (touched_at)`);
  }
}
