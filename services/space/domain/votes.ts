/** A vote's value: 1 up, -1 down, 0 withdraws the caller's vote. */
export function voteValue(value: number | undefined): -1 | 0 | 1 | undefined {
  return value === 1 || value === -1 || value === 0 ? value : undefined;
}
