import { Migration } from "@mikro-orm/migrations";

/**
 * A checkout's Idempotency-Key moves to the kit's idempotency keys (scope
 * `checkout:<supporter>`, the request hash unchanged), which keep the
 * checkout's id as the stored answer: a tips.paid-result@1 holding only the
 * checkout's id (protobuf: field 1 holding field 1, ids shorter than 126 bytes).
 */
export class Migration20261125100000_tips_checkout_keys extends Migration {
  override up(): void {
    this.addSql(`insert into idempotency_keys (scope, key, request_hash, response, created_at)
      select 'checkout:' || supporter, idempotency_key, request_hash,
             decode('0a' || lpad(to_hex(octet_length(id) + 2), 2, '0')
                 || '0a' || lpad(to_hex(octet_length(id)), 2, '0'), 'hex') || convert_to(id, 'UTF8'),
             created_at
        from checkouts
      on conflict do nothing`);
    this.addSql(`alter table checkouts drop column idempotency_key, drop column request_hash`);
  }
}
