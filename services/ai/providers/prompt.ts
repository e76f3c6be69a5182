import type { ChatTurn, ProviderCall } from "./provider.js";

/** What a chat model is asked: a system text and the turns, and whether the answer must be a JSON object. */
export interface Prompt {
  system: string;
  turns: ChatTurn[];
  json: boolean;
}

/** What classify, extract and enrich read: the text, else the documents' texts. */
export const subjectOf = (call: ProviderCall): string =>
  call.task.text !== "" ? call.task.text : call.task.documents.map((document) => document.text).join("\n\n");

const SUMMARIZE =
  "Summarise the numbered documents in a few sentences, using only what they say. After each statement put the " +
  "number of the document it comes from in square brackets, like [1].";
const CLASSIFY =
  "Classify the text into the labels given. Answer with only a JSON object of the form " +
  '{"labels": {"<label>": <score from 0 to 1>}}, scoring every label given.';
const EXTRACT =
  "Extract the fields given from the text. Answer with only a JSON object having exactly those fields as keys; a " +
  "field the text does not state is null.";
const ENRICH =
  'Describe the text. Answer with only a JSON object: {"keywords": [up to 5 key terms], "entities": [names of ' +
  'people, organisations, places and products], "language": "<ISO 639-1 code>", "summary": "<one sentence>"}.';

const joined = (...parts: string[]): string => parts.filter((part) => part !== "").join("\n\n");
const asked = (system: string, user: string, call: ProviderCall, json = false): Prompt => ({
  system: joined(system, call.instruction),
  turns: [{ role: "user", content: user }],
  json,
});

/** The messages each operation sends a chat model; the workflow's instruction follows the operation's own. */
export function promptOf(call: ProviderCall): Prompt {
  const { task } = call;
  switch (call.operation) {
    case "chat": {
      const turns = call.messages.filter((turn) => turn.role !== "system");
      return {
        system: joined(
          call.instruction,
          ...call.messages.filter((turn) => turn.role === "system").map((t) => t.content),
        ),
        turns: turns.length > 0 ? turns : [{ role: "user", content: task.text }],
        json: false,
      };
    }
    case "generate":
    case "embed":
      return asked("", task.text, call);
    case "summarize": {
      const numbered = task.documents.map(
        (document, index) => `[${index + 1}] (${document.id}) ${joined(document.title, document.text)}`,
      );
      return asked(SUMMARIZE, numbered.length > 0 ? numbered.join("\n\n") : task.text, call);
    }
    case "classify":
      return asked(CLASSIFY, `Labels: ${JSON.stringify(task.labels)}\n\nText:\n${subjectOf(call)}`, call, true);
    case "extract":
      return asked(EXTRACT, `Fields: ${JSON.stringify(task.fields)}\n\nText:\n${subjectOf(call)}`, call, true);
    case "enrich":
      return asked(ENRICH, subjectOf(call), call, true);
  }
}

/** The characters a prompt sends, for a token estimate when the provider reports none. */
export const promptLength = (prompt: Prompt): number =>
  prompt.system.length + prompt.turns.reduce((sum, turn) => sum + turn.content.length, 0);
