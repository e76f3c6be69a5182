import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { JobInputSchema, JobLimitsSchema } from "../../gen/pf/bot/v1/jobs_pb.js";
import { canonicalJson, inputFault, stricterLimits, stricterTtl } from "../../agent/job-rules.js";
import { sha256 } from "./support.js";

const own = { memoryBytes: 1000, outputBytes: 2000, cpuMs: 3000 };

describe("a job's ttl and limits", () => {
  it("are each the stricter of the job's and the device's; one the job leaves unset is the device's", () => {
    const asked = create(JobLimitsSchema, { memoryBytes: 500n, outputBytes: 5000n });
    expect(stricterLimits(asked, own)).toEqual({ memoryBytes: 500, outputBytes: 2000, cpuMs: 3000 });
    expect(stricterLimits(undefined, own)).toEqual(own);
    expect(stricterTtl(60_000n, 10_000)).toBe(10_000);
    expect(stricterTtl(5_000n, 10_000)).toBe(5_000);
  });
});

describe("args", () => {
  it("reach a run as canonical JSON: keys sorted at every depth", () => {
    expect(canonicalJson({ b: [{ d: 1, c: "x" }], a: null })).toBe('{"a":null,"b":[{"c":"x","d":1}]}');
  });
});

describe("inputs", () => {
  const input = (name: string, mediaKey = "k") =>
    create(JobInputSchema, { name, mediaKey, size: 1n, sha256: sha256("x") });

  it("are plain, unique file names pinned by digest, with a media key and never a URL", () => {
    expect(inputFault([input("a.txt"), input("b.txt")])).toBeUndefined();
    for (const name of ["", ".", "..", "a/b", "a\\b", "a\0b", "x".repeat(256)])
      expect(inputFault([input(name)])).toContain("input");
    expect(inputFault([input("a"), input("a")])).toContain("named twice");
    expect(inputFault([input("a", "https://example.com/a")])).toContain("URL");
    expect(inputFault([create(JobInputSchema, { name: "a", mediaKey: "k", sha256: "nope" })])).toContain("sha256");
  });
});
