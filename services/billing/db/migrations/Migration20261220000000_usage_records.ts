import { Migration } from "@mikro-orm/migrations";
import { IMMUTABLE } from "./Migration20261122100000_billing.js";

/** Metered usage (run's jobs, in wall-clock seconds): insert-only, one record per service, operation and reference. */
export class Migration20261220000000_usage_records extends Migration {
  override up(): void {
    this.addSql(`create table usage_records (
      id text primary key,
      service text not null,
      operation text not null,
      unit text not null,
      quantity bigint not null,
      project_id text not null,
      reference text not null,
      payer text not null,
      recorded_at timestamptz not null,
      constraint usage_records_quantity_check check (quantity >= 0)
    )`);
    this.addSql(`alter table usage_records add constraint usage_records_once unique (service, operation, reference)`);
    // Function names follow MikroORM's {table}_{trigger}_fn, so the entity declares this trigger.
    this.addSql(
      `create function usage_records_usage_records_immutable_fn() returns trigger as $$ begin ${IMMUTABLE} end; $$ language plpgsql`,
    );
    this.addSql(
      `create trigger usage_records_immutable before update or delete on usage_records for each row execute function usage_records_usage_records_immutable_fn()`,
    );
  }
}
