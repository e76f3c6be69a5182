import { describe, expect, it } from "vitest";
import type { HttpAnswer } from "../support/platform.js";
import { usePlatform } from "../support/platform.js";
import { ADMIN, project, projectClaims, runCall } from "./support.js";

/** Run's input rules, declared in its contract: every fault of a request reported at once, before any handler. */
const t = usePlatform({ services: ["run"] });

/** The fields a 400 request.invalid lists in `errors`, in order. */
function faultFields(answer: HttpAnswer): string[] {
  expect(answer.body, JSON.stringify(answer.body)).toMatchObject({ status: 400, code: "request.invalid" });
  return (answer.body.errors as { field: string }[]).map((fault) => fault.field);
}

describe("run's input rules", () => {
  it("report every rule a request breaks, each naming its field", async () => {
    const call = runCall(t, await t.token(projectClaims(project())));
    const submit = await call("POST", "/jobs", {
      class: "Not A Class",
      artifact: "a".repeat(129),
      args: { n: 1 },
      ttl_ms: 86_400_001,
      limits: { memory_bytes: -1 },
      inputs: Array.from({ length: 65 }, (_, i) => ({ name: `f${i}`, media_key: "k", sha256: "0".repeat(64) })),
    });
    expect(faultFields(submit)).toEqual(["class", "artifact", "ttl_ms", "limits.memory_bytes", "inputs"]);

    const list = await call("GET", `/jobs?state=done&limit=201&cursor=${"c".repeat(513)}`);
    expect(faultFields(list)).toEqual(["state", "limit", "cursor"]);

    const admin = runCall(t, await t.token(ADMIN));
    const all = await admin("GET", `/admin/jobs?project_id=${"p".repeat(129)}&limit=0`);
    expect(faultFields(all)).toEqual(["project_id", "limit"]);

    const stream = await call("GET", `/jobs/job_1/stream?ticket=${"t".repeat(129)}&last_event_id=x`);
    expect(faultFields(stream)).toEqual(["ticket", "last_event_id"]);

    const read = await call("GET", "/jobs/tsk_1");
    expect(faultFields(read)).toEqual(["id"]);
  });
});
