import { Migration } from "@mikro-orm/migrations";

/** The coupons schema: merchants, their domain rules, coupon codes, reports. */
export class Migration20261123000000_coupons extends Migration {
  override up(): void {
    this.addSql(`create table merchants (
      id text primary key,
      name text not null,
      host text not null,
      status text not null check (status in ('pending', 'approved', 'disabled')),
      created_by text not null,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`);
    this.addSql(`create table domain_rules (
      domain text not null,
      path_prefix text not null,
      merchant_id text not null,
      include_subdomains boolean not null,
      created_at timestamptz not null,
      primary key (domain, path_prefix)
    )`);
    this.addSql(`create index domain_rules_by_merchant on domain_rules (merchant_id)`);
    this.addSql(`create table coupons (
      id text primary key,
      merchant_id text not null,
      code text not null,
      code_key text not null,
      description text not null,
      restrictions text not null,
      evidence text not null,
      expires_at timestamptz,
      origin text not null check (origin in ('person', 'ai')),
      submitted_by text not null,
      held_for_review boolean not null,
      published_at timestamptz,
      moderation text not null default '' check (moderation in ('', 'disabled', 'expired')),
      moderated_by text not null default '',
      moderation_reason text not null default '',
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`);
    this.addSql(`create unique index coupons_code_per_merchant on coupons (merchant_id, code_key)`);
    this.addSql(`create index coupons_by_merchant on coupons (merchant_id, id)`);
    this.addSql(`create table coupon_reports (
      id text primary key,
      coupon_id text not null,
      reporter text not null,
      outcome text not null check (outcome in ('worked', 'failed')),
      day text not null check (day ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$'),
      latest boolean not null,
      created_at timestamptz not null
    )`);
    this.addSql(`create unique index coupon_reports_one_per_day on coupon_reports (coupon_id, reporter, day)`);
    this.addSql(`create unique index coupon_reports_one_latest on coupon_reports (coupon_id, reporter) where latest`);
  }
}
