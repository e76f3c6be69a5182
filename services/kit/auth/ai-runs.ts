import { Code, ConnectError, type Client } from "@connectrpc/connect";
import type { AiService } from "../../../gen/pf/ai/v1/ai_pb.js";
import type { Run } from "../../../gen/pf/ai/v1/runs_pb.js";
import { ProblemSchema } from "../../../gen/pf/v1/problem_pb.js";
import { problem } from "../handler/problem.js";
import type { AiRule, Author } from "./authorship.js";

/** What verifying a run needs of the AI service: its run read (GetRun, rule "any" through `ai.run.read`). */
export type AiRuns = Pick<Client<typeof AiService>, "getRun">;

/** The AI service's run ids (`air_…`, at most 64 characters as RunRequest.id takes): anything else it never issued. */
const AI_RUN_ID = /^air_[0-9a-z]{1,60}$/;

/**
 * The author of AI output once the AI service has vouched for its run (call it after `authorOf`, before any
 * transaction: it asks another service). The run must exist, be of the rule's workflow, have succeeded, and
 * belong to the sending service or the person it acts for; anything else is 422 with the rule's code. The stub
 * flag is the run's: a claim of the stub provider for a run a model answered is 422 too. An AI service that does
 * not answer is 503 dependency.unavailable, never a yes. Other authors pass unchanged.
 */
export async function verifiedAuthor(ai: AiRuns, author: Author, rule: AiRule): Promise<Author> {
  if (author.kind !== "ai") return author;
  const run = await runOf(ai, author.runId, rule);
  const refuse = (detail: string) => problem(422, rule.code, detail, { workflow: rule.workflow, run_id: run.id });
  if (run.workflow !== author.workflow)
    throw refuse(`Run ${run.id} ran the workflow ${run.workflow || run.operation}, not ${author.workflow}.`);
  if (run.state !== "succeeded") throw refuse(`Run ${run.id} is ${run.state}: only a run that succeeded is output.`);
  if (run.caller !== author.service && run.caller !== author.requestedBy)
    throw refuse(`Run ${run.id} is not a run of ${author.service} or of the person it acts for.`);
  if (author.stubProvider && !run.stub)
    throw refuse(`Run ${run.id} was answered by a model, not the stub provider the request names.`);
  return { ...author, stubProvider: run.stub };
}

async function runOf(ai: AiRuns, id: string, rule: AiRule): Promise<Run> {
  const unknown = () =>
    problem(422, rule.code, `run ${id} is unknown to the AI service`, { workflow: rule.workflow, run_id: id });
  if (!AI_RUN_ID.test(id)) throw unknown();
  const answer = await ai.getRun({ id }).catch((error: unknown) => {
    throw isUnknownRun(error) ? unknown() : unavailable();
  });
  if (!answer.run) throw unavailable();
  return answer.run;
}

/** The AI service's own 404 for a run it does not hold; any other failure is no answer. */
function isUnknownRun(error: unknown): boolean {
  if (!(error instanceof ConnectError) || error.code !== Code.NotFound) return false;
  const [found] = error.findDetails(ProblemSchema);
  return found?.code === "ai.run.not_found";
}

function unavailable(): ConnectError {
  return problem(503, "dependency.unavailable", "The AI service did not answer to verify the run; try again later.", {
    service: "ai",
  });
}
