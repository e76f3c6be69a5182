import { describe, expect, it } from "vitest";
import { formatTable, goalText, rateRow, verdict, type BenchRow, type LoadResult } from "../../bench/load.js";
import { formatProfile, topSelfTime } from "../../bench/profile.js";
import { startPhases } from "../../bench/start.js";

const row = (label: string, figures: Partial<LoadResult>): LoadResult => ({
  label,
  requests: 100,
  rps: 1000,
  p50: 2,
  p99: 10,
  failures: 0,
  cpuPerRequest: 50,
  ...figures,
});

describe("a bench row's goal and verdict (issue 33)", () => {
  const bare = { bench: "gateway read", result: row("bare fastify", { rps: 20_000 }) };
  const judged = (result: LoadResult, rows: BenchRow[] = [bare]) => {
    const judgedRow = { bench: "gateway read", result };
    return verdict(judgedRow, [...rows, judgedRow]);
  };

  it("holds a latency below its bound, the figure shown", () => {
    expect(judged(row("search", { p99: 99.4, goal: { figure: "p99", below: 100 } }))).toBe("met (99 ms)");
    expect(judged(row("search", { p99: 5_400, goal: { figure: "p99", below: 100 } }))).toBe("not met (5,400 ms)");
  });

  it("holds a rate at least its bound", () => {
    const relay = rateRow("relay", 20_000, 10_000);
    expect(judged({ ...relay, goal: { figure: "rps", atLeast: 10_000 } })).toBe("met (10,000/s)");
    expect(judged({ ...relay, rps: 5_557, goal: { figure: "rps", atLeast: 10_000 } })).toBe("not met (5,557/s)");
  });

  it("holds a ratio to the row it names, in the same benchmark only", () => {
    const goal = { figure: "ratio", of: "bare fastify", atLeast: 0.85 } as const;
    expect(judged(row("gateway", { rps: 17_000, goal }))).toBe("met (0.85×)");
    expect(judged(row("gateway", { rps: 8_400, goal }))).toBe("not met (0.42×)");
    const elsewhere = { bench: "media transfer", result: bare.result };
    expect(judged(row("gateway", { rps: 17_000, goal }), [elsewhere])).toBe("not met (NaN×)");
  });

  it("fails a goal whose answers went wrong, or whose figure was not measured", () => {
    expect(judged(row("search", { failures: 3, goal: { figure: "p99", below: 100 } }))).toBe("not met (10 ms)");
    expect(judged(row("start", { goal: { figure: "rssMb", below: 400 } }))).toBe("not met (NaN MB)");
    expect(judged(row("start", { rssMb: 353.6, goal: { figure: "rssMb", below: 400 } }))).toBe("met (354 MB)");
  });

  it("prints the goal and the verdict as the table's last columns, '-' without a goal", () => {
    const goal = { figure: "ratio", of: "bare fastify", atLeast: 0.85 } as const;
    const table = formatTable([bare, { bench: "gateway read", result: row("gateway", { rps: 8_400, goal }) }]);
    const [header, , reference, measured] = table.split("\n");
    expect(header).toMatch(/failures {2}goal {13,}verdict$/);
    expect(reference).toMatch(/ {2}- {2,}-$/);
    expect(measured).toMatch(/ {2}≥ 0\.85× bare fastify {2}not met \(0\.42×\)$/);
    expect(goalText({ figure: "p99", below: 25 })).toBe("p99 < 25 ms");
    expect(goalText({ figure: "rps", atLeast: 10_000 })).toBe("req/s ≥ 10000");
    expect(goalText({ figure: "rssMb", below: 400 })).toBe("RSS < 400 MB");
  });
});

describe("where a start's time went (bench start)", () => {
  it("splits spawn to ready by the platform's phase lines", () => {
    const spawnedAt = 1_000_000;
    // The platform's process began 1.5 s after the spawn (npm, the bundle) and logged first 1.2 s later.
    const began = spawnedAt + 1_500;
    const line = (phase: string, uptimeMs: number) => ({ phase, uptimeMs, time: began + uptimeMs });
    const lines = [
      line("database", 1_200),
      line("database", 1_500),
      line("nats", 1_500),
      line("migrations", 1_600),
      line("workers", 2_300),
      line("ports", 2_600),
    ];
    expect(startPhases(lines, spawnedAt, began + 2_700)).toBe(
      "npm + bundle 1.50, code loaded 1.20, database 0.30, services 0.80, ports 0.30, to /readyz 0.10 s",
    );
    expect(startPhases([], spawnedAt, began)).toBe("no phase lines");
  });
});

describe("a measured window's profile (BENCH_PROFILE=1)", () => {
  it("ranks functions by self time, as shares of the busy samples, idle left out", () => {
    const frame = (functionName: string, url: string, lineNumber: number) => ({
      functionName,
      url,
      lineNumber,
      columnNumber: 0,
      scriptId: "0",
    });
    const profile = {
      nodes: [
        { id: 1, callFrame: frame("(root)", "", -1) },
        { id: 2, callFrame: frame("(idle)", "", -1) },
        { id: 3, callFrame: frame("toJson", "file:///repo/node_modules/@bufbuild/protobuf/dist/to-json.js", 41) },
        { id: 4, callFrame: frame("", "file:///repo/gateway/routes.ts", 9) },
        { id: 5, callFrame: frame("(garbage collector)", "", -1) },
        // Another node of the same function (another call path): one entry.
        { id: 6, callFrame: frame("toJson", "file:///repo/node_modules/@bufbuild/protobuf/dist/to-json.js", 41) },
      ],
      startTime: 0,
      endTime: 1_000,
      samples: [2, 3, 4, 3, 5, 2, 6, 2],
      timeDeltas: [500, 200, 200, 200, 200, 500, 200, 500],
    };
    expect(topSelfTime(profile)).toEqual([
      { name: "toJson", at: "to-json.js:42", percent: 60 },
      { name: "(anonymous)", at: "routes.ts:10", percent: 20 },
      { name: "(garbage collector)", at: "(native)", percent: 20 },
      // (root) sampled never: absent; the top is cut at its length.
    ]);
    expect(topSelfTime(profile, 1)).toHaveLength(1);
    expect(formatProfile("search: suggest", topSelfTime(profile, 2)).split("\n")).toEqual([
      "profile of search: suggest (self time, this process, measured window):",
      "   60.0%  toJson  to-json.js:42",
      "   20.0%  (anonymous)  routes.ts:10",
    ]);
  });
});
