import { Migration } from "@mikro-orm/migrations";

/**
 * Who made each schedule (`scheduled_by`): the scheduler applies it only while that person may still publish the
 * post. Schedules made before this was recorded get "" (no one): unknown never authorizes, so they fail
 * (blog.schedule.failed) rather than publish for someone who may have lost the right.
 */
export class Migration20261229000000_blog_schedules_by extends Migration {
  override up(): void {
    this.addSql(`alter table schedules add column scheduled_by text not null default ''`);
    this.addSql(`alter table schedules alter column scheduled_by drop default`);
    this.addSql(`create index schedules_by_person on schedules (scheduled_by, state)`);
  }
}
