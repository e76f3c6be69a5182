import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { invalid } from "../../kit/handler/problem.js";

/** What an observation request states; the instrument is looked up by the handler. */
export interface ObservationStatement {
  metric: string;
  valueText: string;
  unit: string;
  currency: string;
  observedAt: Date;
  retrievedAt: Date;
  sourceKey: string;
  sourceRef: string;
}

/** An observation as asked, its fields as the contract's rules let them through (both times set). */
interface ObservationInput {
  metric: string;
  value: string;
  unit: string;
  currency: string;
  observedAt?: Timestamp;
  retrievedAt?: Timestamp;
  sourceKey: string;
  sourceRef: string;
}

/** The seconds of 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z: the range of a protobuf Timestamp. */
const FIRST_SECOND = -62135596800n;
const LAST_SECOND = 253402300799n;

/**
 * A time as a Date: 400 naming the field when outside a Timestamp's range (a
 * gRPC caller may send any seconds). Never defaulted (not to now, not to
 * retrieved_at): the contract requires both times.
 */
function timeOf(field: string, value: Timestamp): Date {
  const { seconds, nanos } = value;
  if (seconds < FIRST_SECOND || seconds > LAST_SECOND || nanos < 0 || nanos > 999_999_999)
    throw invalid(field, `${field} is a time between 0001-01-01 and 9999-12-31`);
  return timestampDate(value);
}

/** An observation exactly as stated: the value stays the caller's text, both times as sent. Nothing is filled in. */
export function observationStatement(input: ObservationInput): ObservationStatement {
  return {
    metric: input.metric,
    valueText: input.value,
    unit: input.unit,
    currency: input.currency,
    observedAt: timeOf("observed_at", input.observedAt!),
    retrievedAt: timeOf("retrieved_at", input.retrievedAt!),
    sourceKey: input.sourceKey,
    sourceRef: input.sourceRef,
  };
}
