import type { JsonObject } from "@bufbuild/protobuf";
import type { Operator } from "../../../gen/pf/bot/v1/robots_pb.js";
import { invalid } from "../../kit/handler/problem.js";

/** A robot's configuration is any JSON object of at most this many bytes (designed: the spec names no bound). */
export const CONFIGURATION_MAX_BYTES = 64 * 1024;

/** 400 naming `configuration` past its bound. */
export function checkConfiguration(configuration: JsonObject | undefined): void {
  if (configuration === undefined) return;
  const bytes = Buffer.byteLength(JSON.stringify(configuration));
  if (bytes > CONFIGURATION_MAX_BYTES)
    throw invalid("configuration", `The configuration is ${bytes} bytes as JSON; at most ${CONFIGURATION_MAX_BYTES}.`);
}

/**
 * Operator changes a request may make: each person once, never the owner (the owner's role is the robot's), and
 * nobody both set and removed. 400 naming the entry.
 */
export function checkOperators(owner: string, operators: readonly Operator[], removed: readonly string[] = []): void {
  const seen = new Set<string>();
  operators.forEach((operator, at) => {
    const field = `operators[${at}].subject`;
    if (operator.subject === owner) throw invalid(field, `${owner} owns the robot: the owner is no operator entry.`);
    if (seen.has(operator.subject)) throw invalid(field, `${operator.subject} is named twice.`);
    if (removed.includes(operator.subject))
      throw invalid(field, `${operator.subject} is both set and removed; send one of them.`);
    seen.add(operator.subject);
  });
}
