/** Money as every service takes it: positive whole minor units of an ISO 4217 currency (bigint, never floats). */
import { create } from "@bufbuild/protobuf";
import { MoneySchema, type Money } from "../../../gen/pf/v1/money_pb.js";
import { invalid } from "./problem.js";

/** The most one amount or balance holds: far beyond any real purchase, far inside bigint and int64. */
export const MAX_MINOR_UNITS = 1_000_000_000_000_000n;

const CURRENCY = /^[A-Z]{3}$/;

/** An ISO 4217 code as billing stores it. */
export function requireCurrency(field: string, currency: string): string {
  if (!CURRENCY.test(currency))
    throw invalid(field, `${field} must be an ISO 4217 code of three upper-case letters (USD).`);
  return currency;
}

/** A positive amount of money, in whole minor units up to MAX_MINOR_UNITS. */
export function requireAmount(field: string, money: Money | undefined): { currency: string; amount: bigint } {
  if (money === undefined) throw invalid(field, `${field} is required: {"minor_units": …, "currency": "USD"}.`);
  const currency = requireCurrency(`${field}.currency`, money.currency);
  if (money.minorUnits <= 0n || money.minorUnits > MAX_MINOR_UNITS) {
    throw invalid(`${field}.minor_units`, `${field}.minor_units must be a whole number from 1 to ${MAX_MINOR_UNITS}.`);
  }
  return { currency, amount: money.minorUnits };
}

export function money(amount: bigint, currency: string): Money {
  return create(MoneySchema, { minorUnits: amount, currency });
}
