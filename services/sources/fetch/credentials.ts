/** Credential variables a source may name: nothing else of the environment (keys, DATABASE_URL) can be aimed at a host. */
export const CREDENTIAL_PREFIX = "PF_SOURCE_CRED_";

/** As the contract's rule on `Credential.variable`, which refuses any other name at write time. */
const NAME = /^PF_SOURCE_CRED_[A-Z0-9_]{1,64}$/;

/** Why a credential variable name is refused, checked again at fetch time whatever the row holds; undefined when it may be used. */
export function credentialNameProblem(name: string): string | undefined {
  return NAME.test(name) ? undefined : `must be ${CREDENTIAL_PREFIX} followed by 1 to 64 of A-Z, 0-9 and _`;
}

export interface CredentialReference {
  variable: string;
  scheme: "bearer" | "header" | "basic";
  /** The header's name, for scheme `header`. */
  header?: string;
}

/**
 * The headers carrying a source's credential, its value read from `env` now
 * (never stored, never logged; the caller sends them as `credentialHeaders`,
 * dropped on a redirect to another host), or why it cannot be sent. Basic
 * takes the variable's value as `user:password`.
 */
export function credentialHeaders(
  credential: CredentialReference,
  env: Readonly<Record<string, string | undefined>>,
): { headers: Record<string, string> } | { missing: string } {
  const refused = credentialNameProblem(credential.variable);
  if (refused !== undefined) return { missing: `credential variable ${refused}` };
  const value = env[credential.variable];
  if (value === undefined || value === "") return { missing: `${credential.variable} is not set` };
  if (/[\r\n\0]/.test(value)) return { missing: `${credential.variable} holds a line break or NUL` };
  switch (credential.scheme) {
    case "bearer":
      return { headers: { authorization: `Bearer ${value}` } };
    case "basic":
      return { headers: { authorization: `Basic ${Buffer.from(value).toString("base64")}` } };
    case "header":
      if (!credential.header || !/^[A-Za-z0-9-]{1,64}$/.test(credential.header))
        return { missing: "the credential's header name is not a header name" };
      return { headers: { [credential.header.toLowerCase()]: value } };
  }
}
