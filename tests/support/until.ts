/**
 * Waits until `check` holds, looking every 50 ms; throws once `timeoutMs` has passed, with what `explain` says of the
 * state it waited on (a flaky wait's failure then shows why).
 */
export async function until(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 15_000,
  explain?: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms${explain ? `: ${explain()}` : ""}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Waits until the wall clock has passed `moment` (ms since the epoch). Only for what is tested against a deadline
 * the code keeps on Date.now() itself (a call's deadline), which no ManualClock drives: the moment passing is then
 * the observable condition.
 */
export async function untilPast(moment: number): Promise<void> {
  await until(() => Date.now() > moment, Math.max(15_000, moment - Date.now() + 15_000));
}
