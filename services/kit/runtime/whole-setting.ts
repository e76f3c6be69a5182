/** A whole-number setting from the environment: `fallback` when unset, at least `min`, else startup stops naming it. */
export function wholeSetting(env: Record<string, string | undefined>, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min)
    throw new Error(`${name} must be a whole number of at least ${min}, got ${JSON.stringify(raw)}`);
  return value;
}
