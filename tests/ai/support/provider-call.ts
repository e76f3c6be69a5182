import type { ProviderCall } from "../../../services/ai/providers/provider.js";

type CallParts = Omit<Partial<ProviderCall>, "task"> & { task?: Partial<ProviderCall["task"]> };

/** A provider call as the engine makes one: chat by default, nothing in its task, a generous time limit. */
export const callOf = (parts: CallParts = {}): ProviderCall => ({
  operation: "chat",
  model: "test-model",
  instruction: "",
  messages: [],
  maxOutputTokens: 256,
  timeoutMs: 10_000,
  signal: new AbortController().signal,
  ...parts,
  task: { text: "", documents: [], labels: [], fields: [], inputs: [], ...parts.task },
});

/** What a promise rejected with (the test fails when it resolved). */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}
