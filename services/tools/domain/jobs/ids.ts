/** A job id: `job_` and 24 characters of 0-9 a-z (the contract's pattern), about 124 random bits: unguessable. */
export const JOB_ID = /^job_[0-9a-z]{24}$/;

const SPACE = 36n ** 24n;

/** The id of a new job from 16 random bytes (reduced to 24 base-36 digits). */
export function jobIdFrom(random: Uint8Array): string {
  if (random.length !== 16) throw new Error("a job id takes 16 random bytes");
  const value = BigInt(`0x${Buffer.from(random).toString("hex")}`) % SPACE;
  return `job_${value.toString(36).padStart(24, "0")}`;
}
