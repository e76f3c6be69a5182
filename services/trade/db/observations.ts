import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import { type Observation, ObservationSchema } from "../../../gen/pf/trade/v1/observations_pb.js";
import { sql } from "../../kit/db/sql.js";
import { ObservationRow } from "./entities.js";
import type { ObservationStatement } from "../domain/observations.js";

/** An observation to record: what its source stated, the instrument it is about, and when it was recorded. */
export interface StatedObservation extends ObservationStatement {
  id: string;
  instrumentId: string;
  recordedAt: Date;
}

/**
 * Records the observation unless its (source_key, source_ref) is taken, and
 * answers whether it did. The value is cast to `numeric` by PostgreSQL from
 * the stated text, never through a JS number. A concurrent writer of the same
 * reference waits on the unique index and then finds it taken.
 */
export async function insertObservation(em: EntityManager, stated: StatedObservation): Promise<boolean> {
  const rows = await sql<{ id: string }>(
    em,
    `insert into {observations} (id, instrument_id, metric, value_text, value, unit, currency,
       observed_at, retrieved_at, source_key, source_ref, recorded_at)
     values (?, ?, ?, ?, ?::numeric, ?, ?, ?, ?, ?, ?, ?)
     on conflict (source_key, source_ref) do nothing returning id`,
    [
      stated.id,
      stated.instrumentId,
      stated.metric,
      stated.valueText,
      stated.valueText,
      stated.unit,
      stated.currency,
      stated.observedAt,
      stated.retrievedAt,
      stated.sourceKey,
      stated.sourceRef,
      stated.recordedAt,
    ],
  );
  return rows.length === 1;
}

/** The observation recorded under a source's reference. */
export function observationByRef(em: EntityManager, sourceKey: string, sourceRef: string) {
  return em.findOne(ObservationRow, { sourceKey, sourceRef });
}

/** Whether a replay states the same value: all but retrieved_at (a later retrieval of the same fact) counts. */
export function sameStatement(row: ObservationRow, stated: StatedObservation): boolean {
  return (
    row.instrumentId === stated.instrumentId &&
    row.metric === stated.metric &&
    row.valueText === stated.valueText &&
    row.unit === stated.unit &&
    row.currency === stated.currency &&
    row.observedAt.getTime() === stated.observedAt.getTime()
  );
}

/** An observation as the proto message. */
export function observationToProto(row: ObservationRow, symbol: string): Observation {
  return create(ObservationSchema, {
    id: row.id,
    instrumentId: row.instrumentId,
    symbol,
    metric: row.metric,
    value: row.valueText,
    unit: row.unit,
    currency: row.currency,
    observedAt: timestampFromDate(row.observedAt),
    retrievedAt: timestampFromDate(row.retrievedAt),
    sourceKey: row.sourceKey,
    sourceRef: row.sourceRef,
    recordedAt: timestampFromDate(row.recordedAt),
  });
}
