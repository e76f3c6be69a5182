import type { ProviderCall } from "../provider.js";
import { salientSentences } from "./salience.js";
import { sentencesOf, withinTokens } from "./text.js";

/** How many sentences of the prompt a stub answer repeats. */
const ANSWER_SENTENCES = 2;

/**
 * generate and chat without a model: the instruction's first sentence and the most salient sentences of the prompt
 * (the text, or the conversation's last user turn), marked as stub text. The same call always answers the same.
 */
export function generate(call: ProviderCall): string {
  const prompt =
    call.operation === "chat"
      ? (call.messages.findLast((turn) => turn.role === "user")?.content ?? "")
      : call.task.text;
  const instruction = sentencesOf(call.instruction)[0]?.text;
  const echoed = salientSentences([prompt], ANSWER_SENTENCES).map(({ sentence }) => sentence.text);
  const body = [instruction, ...echoed].filter((part) => part !== undefined).join(" ");
  return withinTokens(`[stub answer] ${body === "" ? "Nothing to answer." : body}`, call.maxOutputTokens);
}
