import { ConnectionException } from "@mikro-orm/core";

/** Socket errors and PostgreSQL's connection and shutdown states: the database is not there, the request is fine. */
const UNREACHABLE = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENOTFOUND",
  // Too many clients: the server had no connection to spare within the caller's wait.
  "53300",
  "57P01",
  "57P02",
  "57P03",
  "08000",
  "08001",
  "08003",
  "08004",
  "08006",
]);

/** Whether a failure means the database could not be reached (answered 503, not 500). */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (error instanceof ConnectionException) return true;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === "string" && UNREACHABLE.has(code)) return true;
  // pg's own messages: a dropped connection, a query on one, no free connection within PF_DB_ACQUIRE_TIMEOUT_MS.
  return (
    typeof message === "string" &&
    /connection terminated|Connection ended|not queryable|timeout exceeded when trying to connect/i.test(message)
  );
}
