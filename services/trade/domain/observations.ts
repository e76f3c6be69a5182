import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { requireDecimal } from "../../kit/handler/decimals.js";
import { invalid } from "../../kit/handler/problem.js";

/** What an observation request states, checked; the instrument is looked up by the handler. */
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
 * A required time: 400 naming the field when missing or outside a
 * Timestamp's range (a gRPC caller may send any seconds); never defaulted
 * (not to now, not to retrieved_at).
 */
export function requireTime(field: string, value: Timestamp | undefined): Date {
  if (value === undefined) throw invalid(field, `${field} is required and never inferred`);
  const { seconds, nanos } = value;
  if (seconds < FIRST_SECOND || seconds > LAST_SECOND || nanos < 0 || nanos > 999_999_999)
    throw invalid(field, `${field} is a time between 0001-01-01 and 9999-12-31`);
  return timestampDate(value);
}

/** A short identifier-like text (metric, unit, source key): required, at most `max`, no spaces at its ends. */
export function requireWord(field: string, value: string, max: number, pattern: RegExp): string {
  if (value === "") throw invalid(field, `${field} is required`);
  if (value.length > max || !pattern.test(value)) throw invalid(field, `${field} is at most ${max} of ${pattern}`);
  return value;
}

/** A currency code or "" for none. */
export function optionalCurrency(field: string, value: string): string {
  if (value !== "" && !/^[A-Z]{3}$/.test(value)) throw invalid(field, `${field} is an ISO 4217 code (USD) or empty`);
  return value;
}

export const METRIC = /^[a-z][a-z0-9_.]*$/;
export const UNIT = /^[A-Za-z0-9%_./-]+$/;

/**
 * Checks an observation exactly as stated: the value stays the caller's text
 * (a plain decimal), both times are required, the source's key and reference
 * name it. Nothing is filled in.
 */
export function observationStatement(input: ObservationInput): ObservationStatement {
  const statement = {
    metric: requireWord("metric", input.metric, 64, METRIC),
    valueText: requireDecimal("value", input.value),
    unit: requireWord("unit", input.unit, 32, UNIT),
    currency: optionalCurrency("currency", input.currency),
    observedAt: requireTime("observed_at", input.observedAt),
    retrievedAt: requireTime("retrieved_at", input.retrievedAt),
    sourceKey: requireWord("source_key", input.sourceKey, 100, /^\S(.*\S)?$/),
    sourceRef: requireWord("source_ref", input.sourceRef, 500, /^\S(.*\S)?$/),
  };
  return statement;
}
