/** A usage record's facts that make two records of one (service, operation, reference) the same. */
export interface UsageFacts {
  unit: string;
  quantity: bigint;
  projectId: string;
}

/**
 * The facts in which a record asked for differs from the one recorded for its reference: none is a retry (answered
 * the first record), any is another request under the same reference (409 idempotency.mismatch).
 */
export function usageDifferences(recorded: UsageFacts, asked: UsageFacts): string[] {
  const differ: string[] = [];
  if (recorded.unit !== asked.unit) differ.push("unit");
  if (recorded.quantity !== asked.quantity) differ.push("quantity");
  if (recorded.projectId !== asked.projectId) differ.push("project_id");
  return differ;
}
