import { describe, expect, it } from "vitest";
import { leaseTries } from "../support/lease-tries.js";
import { usePlatform } from "../support/platform.js";
import { until } from "../support/until.js";
import { fresh, onlineDevice, project, projectClaims, runCall, runOf } from "./support.js";

/**
 * A job's first dispatch try is made by the instance that took its submit, at the submit's commit, not by
 * placement's next pass: placement here never passes (its poll an hour apart), and the job still reaches the device
 * and is placed.
 */
const t = usePlatform({ services: ["run", "bot", "billing"], env: { PF_RUN_PLACEMENT_EVERY_MS: "3600000" } });

describe("a submitted job", () => {
  it("is dispatched at its submit, with no placement pass, and placed once bot took it", async () => {
    const jobClass = fresh("cls");
    const { device, deviceId } = await onlineDevice(t, jobClass);
    const call = runCall(t, await t.token(projectClaims(project())));
    // Counted from here on (the count watches the lease's statements once asked).
    const passes = leaseTries(runOf(t), "run.placement");
    const body = { class: jobClass, artifact: "echo", args: { text: "hi" }, ttl_ms: 60_000, limits: {} };
    const answer = await call("POST", "/jobs", body);
    expect(answer.status).toBe(201);
    expect(answer.body.job.state).toBe("queued");
    const id = answer.body.job.id as string;
    expect(await device.next("job")).toMatchObject({ jobId: id });
    await until(async () => (await call("GET", `/jobs/${id}`)).body.job.state === "placed");
    expect((await call("GET", `/jobs/${id}`)).body.job.placement).toMatchObject({ device_id: deviceId });
    expect(leaseTries(runOf(t), "run.placement")).toBe(passes);
  });
});
