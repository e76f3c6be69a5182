/**
 * Slugs no site may take: names a platform serves itself or that a visitor would take for the platform's own
 * (www.<sites domain>, api., admin., mail.…), written down in services/host/README.md.
 */
export const RESERVED_SLUGS: ReadonlySet<string> = new Set([
  "www",
  "api",
  "admin",
  "app",
  "mail",
  "ftp",
  "static",
  "assets",
  "cdn",
  "status",
  "docs",
  "help",
  "support",
  "blog",
  "dev",
  "staging",
  "test",
  "localhost",
  "host",
  "hosting",
  "platform",
  "pf",
]);
