import type { EntityManager } from "@mikro-orm/postgresql";
import { sql } from "../../kit/db/sql.js";
import { HotRead, type ReadContext } from "../../kit/db/reads.js";

/** Writes the viewers an instance saw as one statement (the latest sighting of each wins). */
export async function recordViewers(
  em: EntityManager,
  marks: { streamId: string; viewer: string; seenAt: Date }[],
): Promise<void> {
  if (marks.length === 0) return;
  await sql(
    em,
    `insert into {viewers} (stream_id, viewer, seen_at)
     select stream_id, viewer, seen_at from jsonb_to_recordset(?::jsonb)
       as marks(stream_id text, viewer text, seen_at timestamptz)
     on conflict (stream_id, viewer) do update set seen_at = greatest({viewers}.seen_at, excluded.seen_at)`,
    // One JSON parameter: the driver would spread an array parameter into a list.
    [JSON.stringify(marks.map((m) => ({ stream_id: m.streamId, viewer: m.viewer, seen_at: m.seenAt.toISOString() })))],
  );
}

/**
 * Samples the metrics into their buckets (each keeps its highest sample) and forgets viewers seen before `since`:
 * live_channels (channels with a live stream) and viewers (distinct viewers of live streams since `since`).
 */
export async function rollUp(em: EntityManager, bucketAt: Date, since: Date): Promise<void> {
  await sql(
    em,
    `insert into {stats_buckets} (metric, bucket_at, value)
     select 'live_channels', ?::timestamptz, count(distinct owner)::int from {streams} where state = 'live'
     union all
     select 'viewers', ?::timestamptz, count(distinct v.viewer)::int from {viewers} v join {streams} s on s.id = v.stream_id
       where s.state = 'live' and v.seen_at > ?
     on conflict (metric, bucket_at) do update set value = greatest({stats_buckets}.value, excluded.value)`,
    [bucketAt, bucketAt, since],
  );
  await sql(em, `delete from {viewers} where seen_at <= ?`, [since]);
}

const series = new HotRead<{ bucket_at: string; value: number }, [string, Date]>(
  "stats.series",
  `select bucket_at, value from {stats_buckets} where metric = $1 and bucket_at >= $2 order by bucket_at`,
);

/** A metric's buckets from `from` on, oldest first. */
export function readSeries(ctx: ReadContext, metric: string, from: Date) {
  return series.run(ctx, metric, from);
}
