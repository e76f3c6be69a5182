import type { RunCreateRequest } from "../../../gen/pf/ai/v1/runs_pb.js";
import { problem } from "../../kit/handler/problem.js";
import type { ChatTurn, SourceDocument } from "../providers/provider.js";
import type { Operation } from "./operations.js";

/** What an operation works on, read from the request (a workflow's defaults filled in). */
export interface RunInput {
  messages: ChatTurn[];
  text: string;
  documents: SourceDocument[];
  labels: string[];
  fields: string[];
  inputs: string[];
}

type InputField = keyof RunInput;

/** The request fields each operation reads; any other one set is refused rather than silently ignored. */
const READS: Record<Operation, readonly InputField[]> = {
  chat: ["messages"],
  generate: ["text"],
  summarize: ["text", "documents"],
  classify: ["text", "labels"],
  extract: ["text", "fields"],
  enrich: ["text"],
  embed: ["inputs"],
};

/** What a direct operation cannot run without (summarize: text or documents, checked apart). */
const NEEDS: Record<Operation, readonly InputField[]> = {
  chat: ["messages"],
  generate: ["text"],
  summarize: [],
  classify: ["text", "labels"],
  extract: ["text", "fields"],
  enrich: ["text"],
  embed: ["inputs"],
};

const inputInvalid = (field: string, detail: string) => problem(400, "ai.input.invalid", detail, { field });

const isSet = (input: RunInput, field: InputField): boolean =>
  field === "text" ? input.text !== "" : input[field].length > 0;

/**
 * The input of a run, 400 ai.input.invalid naming the field when the operation cannot use what it was given or
 * lacks what it needs. A workflow run also takes documents (its prompt may cite them) and its variables; its
 * labels and fields default to the workflow's, and only what it cannot run without at all is required.
 */
export function runInputOf(
  request: RunCreateRequest,
  operation: Operation,
  workflow?: { labels: string[]; fields: string[] },
): RunInput {
  if (request.prompt !== "" && (operation !== "generate" || request.text !== ""))
    throw inputInvalid(
      "prompt",
      operation === "generate"
        ? "Send the prompt once: as prompt or as text."
        : `The operation ${operation} does not read prompt.`,
    );
  const input: RunInput = {
    messages: request.messages.map((message) => ({ role: message.role as ChatTurn["role"], content: message.content })),
    text: request.prompt || request.text,
    documents: request.documents.map(({ id, text, url, title }) => ({ id, text, url, title })),
    labels: request.labels.length > 0 ? [...request.labels] : [...(workflow?.labels ?? [])],
    fields: request.fields.length > 0 ? [...request.fields] : [...(workflow?.fields ?? [])],
    inputs: [...request.inputs],
  };
  const reads = workflow ? [...READS[operation], "documents"] : READS[operation];
  const stray = (Object.keys(READS) as Operation[])
    .flatMap((each) => READS[each])
    .find((field) => !reads.includes(field) && isSet(input, field));
  if (stray !== undefined) throw inputInvalid(stray, `The operation ${operation} does not read ${stray}.`);
  if (!workflow && request.variables !== undefined && Object.keys(request.variables).length > 0)
    throw inputInvalid("variables", "Only a workflow run fills a prompt's variables.");
  const needs = workflow
    ? NEEDS[operation].filter((field) => field !== "text" && field !== "messages")
    : NEEDS[operation];
  const missing = needs.find((field) => !isSet(input, field));
  if (missing !== undefined) throw inputInvalid(missing, `The operation ${operation} needs ${missing}.`);
  if (!workflow && operation === "summarize" && input.text === "" && input.documents.length === 0)
    throw inputInvalid("text", "The operation summarize needs text or documents.");
  return input;
}

/** Every text a call sends (the estimate's basis): the instruction, the conversation, the text and documents. */
export function textsOf(instruction: string, input: RunInput): string[] {
  return [
    instruction,
    ...input.messages.map((message) => message.content),
    input.text,
    ...input.documents.map((document) => document.text),
    ...input.labels,
    ...input.fields,
    ...input.inputs,
  ];
}
