import { Migration } from "@mikro-orm/migrations";

const SYSTEM_KINDS = "array['provider_clearing', 'payouts', 'adjustments', 'imports', 'revenue']";

/**
 * post_batch: many postings in one call (db/transfer-batch.ts), each with its
 * own outcome exactly as post_movements would give it alone, after the ones
 * before it. It locks every account of the batch once, in post_movements'
 * fixed order, decides the postings one after another on the balances the
 * ones before it left (a refused one, short or over the limit, changes
 * nothing and the next goes on), then writes what was decided with one
 * statement per table: the balances, the transactions, the entries (so the
 * balance trigger runs once). Accounts it had to create for refused postings
 * only are removed again, as a rollback of the posting alone would.
 */
export class Migration20261128100000_ledger_batch extends Migration {
  override up(): void {
    this.addSql(`create function post_batch(p_postings jsonb, p_most bigint)
      returns table (posting integer, owner text, kind text, currency text, balance bigint, after bigint, ok boolean, frozen boolean)
      language plpgsql as $$
      #variable_conflict use_column
      declare
        -- The batch's accounts in the fixed order, their balances as the postings go, and when each last changed.
        a_owners text[];
        a_kinds text[];
        a_currencies text[];
        a_balances bigint[];
        a_changed timestamptz[];
        v_created boolean := false;
        p record;
        m_places integer[];
        m_amounts bigint[];
        v_ok boolean;
        v_place integer;
        v_after bigint;
        -- What the batch writes.
        t_ids text[] := '{}';
        t_kinds text[] := '{}';
        t_reasons text[] := '{}';
        t_services text[] := '{}';
        t_ref_kinds text[] := '{}';
        t_ref_ids text[] := '{}';
        t_by text[] := '{}';
        t_at timestamptz[] := '{}';
        e_ids text[] := '{}';
        e_places integer[] := '{}';
        e_amounts bigint[] := '{}';
        e_after bigint[] := '{}';
        e_at timestamptz[] := '{}';
      begin
        if (select e.frozen from billing.economy e where e.id = 1) then
          return query select q.n::integer, null::text, null::text, null::text, null::bigint, null::bigint, false, true
            from jsonb_array_elements(p_postings) with ordinality as q (body, n);
          return;
        end if;
        select array_agg(w.owner order by w.owner collate "C", w.kind collate "C", w.currency collate "C"),
            array_agg(w.kind order by w.owner collate "C", w.kind collate "C", w.currency collate "C"),
            array_agg(w.currency order by w.owner collate "C", w.kind collate "C", w.currency collate "C")
          into a_owners, a_kinds, a_currencies
          from (select distinct m->>'owner' as owner, m->>'kind' as kind, m->>'currency' as currency
            from jsonb_array_elements(p_postings) as q (body) cross join jsonb_array_elements(q.body->'movements') as m) w;
        if (select count(*) from (
            select 1 from billing.accounts a join unnest(a_owners, a_kinds, a_currencies) as w (owner, kind, currency)
              using (owner, kind, currency)
            order by a.owner collate "C", a.kind collate "C", a.currency collate "C"
            for update of a) locked) < cardinality(a_owners) then
          -- Created with a mark no committed row carries: those still marked at the end served refused postings only.
          insert into billing.accounts (owner, kind, currency, balance, updated_at)
            select w.owner, w.kind, w.currency, 0, '-infinity' from unnest(a_owners, a_kinds, a_currencies) as w (owner, kind, currency)
            order by w.owner collate "C", w.kind collate "C", w.currency collate "C"
            on conflict do nothing;
          perform 1 from billing.accounts a join unnest(a_owners, a_kinds, a_currencies) as w (owner, kind, currency)
            using (owner, kind, currency)
          order by a.owner collate "C", a.kind collate "C", a.currency collate "C"
          for update of a;
          v_created := true;
        end if;
        select array_agg(a.balance order by w.place) into a_balances
          from unnest(a_owners, a_kinds, a_currencies) with ordinality as w (owner, kind, currency, place)
          join billing.accounts a using (owner, kind, currency);
        a_changed := array_fill(null::timestamptz, array[cardinality(a_owners)]);

        for p in select q.body, q.n::integer as n, (q.body->>'at')::timestamptz as at
            from jsonb_array_elements(p_postings) with ordinality as q (body, n) order by q.n loop
          -- Its movements in their order, each with its account's place.
          select array_agg(w.place order by m.ord), array_agg((m.body->>'amount')::bigint order by m.ord)
            into m_places, m_amounts
            from jsonb_array_elements(p.body->'movements') with ordinality as m (body, ord)
            join unnest(a_owners, a_kinds, a_currencies) with ordinality as w (owner, kind, currency, place)
              on w.owner = m.body->>'owner' and w.kind = m.body->>'kind' and w.currency = m.body->>'currency';
          v_ok := true;
          for i in 1 .. cardinality(m_places) loop
            v_after := a_balances[m_places[i]] + m_amounts[i];
            if not (a_kinds[m_places[i]] = any (${SYSTEM_KINDS})) and (v_after < 0 or v_after > p_most) then
              v_ok := false;
            end if;
          end loop;
          -- Its accounts in the fixed order, with the balances it found and would leave.
          foreach v_place in array (select array_agg(x order by x) from unnest(m_places) as x) loop
            posting := p.n;
            owner := a_owners[v_place];
            kind := a_kinds[v_place];
            currency := a_currencies[v_place];
            balance := a_balances[v_place];
            after := balance + m_amounts[array_position(m_places, v_place)];
            ok := v_ok;
            frozen := false;
            return next;
          end loop;
          continue when not v_ok;
          for i in 1 .. cardinality(m_places) loop
            a_balances[m_places[i]] := a_balances[m_places[i]] + m_amounts[i];
            a_changed[m_places[i]] := p.at;
            e_ids := e_ids || (p.body->>'id');
            e_places := e_places || m_places[i];
            e_amounts := e_amounts || m_amounts[i];
            e_after := e_after || a_balances[m_places[i]];
            e_at := e_at || p.at;
          end loop;
          t_ids := t_ids || (p.body->>'id');
          t_kinds := t_kinds || (p.body->>'kind');
          t_reasons := t_reasons || (p.body->>'reason');
          t_services := t_services || (p.body->>'reference_service');
          t_ref_kinds := t_ref_kinds || (p.body->>'reference_kind');
          t_ref_ids := t_ref_ids || (p.body->>'reference_id');
          t_by := t_by || (p.body->>'created_by');
          t_at := t_at || p.at;
        end loop;

        update billing.accounts a set balance = w.balance, updated_at = w.changed
          from unnest(a_owners, a_kinds, a_currencies, a_balances, a_changed) as w (owner, kind, currency, balance, changed)
          where w.changed is not null and a.owner = w.owner and a.kind = w.kind and a.currency = w.currency;
        insert into billing.transactions (id, kind, reason, reference_service, reference_kind, reference_id, created_by, created_at)
          select * from unnest(t_ids, t_kinds, t_reasons, t_services, t_ref_kinds, t_ref_ids, t_by, t_at);
        -- One statement for every entry, in posting and movement order: the balance trigger checks each transaction.
        insert into billing.entries (transaction_id, owner, kind, currency, amount, balance_after, created_at)
          select e.id, a_owners[e.place], a_kinds[e.place], a_currencies[e.place], e.amount, e.after, e.at
          from unnest(e_ids, e_places, e_amounts, e_after, e_at) with ordinality as e (id, place, amount, after, at, n)
          order by e.n;
        if v_created then
          delete from billing.accounts a using unnest(a_owners, a_kinds, a_currencies) as w (owner, kind, currency)
            where a.owner = w.owner and a.kind = w.kind and a.currency = w.currency and a.updated_at = '-infinity';
        end if;
      end $$`);
  }
}
