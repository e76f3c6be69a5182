import { describe, it } from "vitest";

/**
 * Something a test needs from the machine. A skip says why; under CI=true
 * nothing skips: what is missing there fails the test that needs it (the
 * global setup already fails a CI run without DATABASE_URL or NATS_URL).
 */
export interface Need {
  /** True when the tests that need it skip here. */
  readonly skips: boolean;
  /** Why they skip, as their names say it. */
  readonly reason: string;
}

export function need(present: boolean, reason: string): Need {
  return { skips: !present && process.env.CI !== "true", reason };
}

/** A NATS server: NATS_URL. */
export const NATS = need(Boolean(process.env.NATS_URL), "NATS_URL is unset: no NATS server");

/** A PostgreSQL server (DATABASE_URL) rather than each file's embedded PGlite. */
export const DATABASE_SERVER = need(Boolean(process.env.DATABASE_URL), "DATABASE_URL is unset: no PostgreSQL server");

const named = (needed: Need, name: string) => (needed.skips ? `${name} (skipped: ${needed.reason})` : name);

/** A describe block that runs where `needed` is, and otherwise skips with the reason in its name. */
export function describeWith(needed: Need, name: string, body: () => void): void {
  describe.skipIf(needed.skips)(named(needed, name), body);
}

/** A test that runs where `needed` is, and otherwise skips with the reason in its name. */
export function itWith(needed: Need, name: string, test: () => unknown, timeout?: number): void {
  it.skipIf(needed.skips)(
    named(needed, name),
    async () => {
      await test();
    },
    timeout,
  );
}
