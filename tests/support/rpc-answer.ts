import type { DescMethod } from "@bufbuild/protobuf";
import { ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { ProblemSchema } from "../../gen/pf/v1/problem_pb.js";

/** An answer as `status code field`, as the refusal checks compare them. */
export const answered = (status: number, code = "", field = "") => `${status} ${code} ${field}`;

/**
 * The field a refusal names: `wanted` when its `errors` list it (the input guard lists every fault of a request, so
 * the fault a check is after may follow one of a field it left unset that the contract requires), else its `field`.
 */
export function namedField(problem: { field?: unknown; errors?: unknown } | undefined, wanted?: string) {
  const listed = Array.isArray(problem?.errors) && problem.errors.some((each) => each?.field === wanted);
  return wanted !== undefined && listed ? wanted : (problem?.field as string | undefined);
}

/**
 * One call of a unary or server-streaming RPC, answered as `status code field`: `200` once it answers (a stream's
 * first message, since a handler checks its input only when the stream is read), else its problem's.
 */
export async function rpcAnswer(
  transport: Transport,
  method: DescMethod,
  request: object,
  headers: Record<string, string>,
  wanted?: string,
): Promise<string> {
  const client = createClient(method.parent, transport) as unknown as Record<
    string,
    (request: object, options: object) => unknown
  >;
  try {
    const answer = client[method.localName](request, { headers });
    if (method.methodKind === "server_streaming")
      await (answer as AsyncIterable<unknown>)[Symbol.asyncIterator]().next();
    else await answer;
    return answered(200);
  } catch (error) {
    const [problem] = ConnectError.from(error).findDetails(ProblemSchema);
    return answered(problem?.status ?? 0, problem?.code, namedField(problem?.extensions, wanted));
  }
}
