import type { DescMethod } from "@bufbuild/protobuf";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { codeName } from "../handler/problem.js";

/** Upper bounds of the duration buckets, in seconds: from a read served from memory to a call's deadline. */
export const RPC_DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** A call answered, in the tallies by code. */
const OK = 0;

/** The `code` label by Connect code: `ok`, then the codes as they travel (`invalid_argument`, `not_found`…). */
const CODE_NAMES = Array.from({ length: Code.Unauthenticated + 1 }, (_, code: Code) => codeName(code));

/** The calls of one method that ended with one code. */
interface Tally {
  count: number;
  sum: number;
  /** Calls per bucket (not cumulative); the last is above every bound. */
  readonly buckets: Float64Array;
}

interface MethodTallies {
  readonly labels: { service: string; method: string };
  /** By Connect code, made on a code's first call. */
  readonly byCode: (Tally | undefined)[];
}

/**
 * Every RPC served, by service (the proto service), method and code: a
 * counter and a duration histogram, measured from before the call scope to
 * the answer (a stream's last message). The interceptor runs on every call,
 * so it only adds to plain numbers kept per method and code (no labels
 * hashed, nothing allocated); they become prom-client metric families when
 * scraped.
 */
export class RpcMetrics {
  private readonly methods = new Map<DescMethod, MethodTallies>();

  interceptor(): Interceptor {
    return (next) => async (req) => {
      const tallies = this.talliesOf(req.method);
      const started = performance.now();
      try {
        const res = await next(req);
        if (res.stream) return { ...res, message: this.counted(res.message, tallies, started) };
        record(tallies, OK, started);
        return res;
      } catch (error) {
        record(tallies, codeOf(error), started);
        throw error;
      }
    };
  }

  /** A stream's messages, its call counted when it ends (cancelled when its reader stops early). */
  private async *counted<T>(messages: AsyncIterable<T>, tallies: MethodTallies, started: number): AsyncIterable<T> {
    let code: number = Code.Canceled;
    try {
      yield* messages;
      code = OK;
    } catch (error) {
      code = codeOf(error);
      throw error;
    } finally {
      record(tallies, code, started);
    }
  }

  /** A call answered before the interceptors (refused at the RPC port's front door), since `started` (`performance.now()`). */
  count(method: DescMethod, code: Code, started: number): void {
    record(this.talliesOf(method), code, started);
  }

  private talliesOf(method: DescMethod): MethodTallies {
    let found = this.methods.get(method);
    if (!found) {
      found = { labels: { service: method.parent.typeName, method: method.name }, byCode: [] };
      this.methods.set(method, found);
    }
    return found;
  }

  /** The metric families, as a prom-client registry reads them (`registerMetric`). */
  families(): RpcFamily[] {
    const family = (name: string, help: string, type: RpcFamily["type"]): RpcFamily => ({
      name,
      help,
      type,
      get: () => this.read(name, help, type),
    });
    return [
      family(
        "pf_rpc_server_calls_total",
        "RPCs served, by service, method and code (ok, or the Connect code they failed with).",
        "counter",
      ),
      family(
        "pf_rpc_server_duration_seconds",
        "How long RPCs took to answer (a server stream: until its end), by service, method and code.",
        "histogram",
      ),
    ];
  }

  private read(name: string, help: string, type: RpcFamily["type"]): FamilySamples {
    const values: FamilySamples["values"] = [];
    for (const { labels, byCode } of this.methods.values()) {
      byCode.forEach((tally, code) => {
        if (!tally) return;
        const these = { ...labels, code: CODE_NAMES[code] };
        if (type === "counter") {
          values.push({ labels: these, value: tally.count });
          return;
        }
        let below = 0;
        RPC_DURATION_BUCKETS.forEach((le, i) => {
          below += tally.buckets[i];
          values.push({ metricName: `${name}_bucket`, labels: { ...these, le }, value: below });
        });
        values.push({ metricName: `${name}_bucket`, labels: { ...these, le: "+Inf" }, value: tally.count });
        values.push({ metricName: `${name}_sum`, labels: these, value: tally.sum });
        values.push({ metricName: `${name}_count`, labels: these, value: tally.count });
      });
    }
    return { name, help, type, values, aggregator: "sum" };
  }
}

/** A metric family prom-client's registry can hold: it reads only these members. */
export interface RpcFamily {
  name: string;
  help: string;
  type: "counter" | "histogram";
  get(): FamilySamples;
}

/** A family's samples, as prom-client's own metrics answer `get()`. */
interface FamilySamples {
  name: string;
  help: string;
  type: string;
  values: { metricName?: string; labels: Record<string, string | number>; value: number }[];
  aggregator: "sum";
}

function record(tallies: MethodTallies, code: number, started: number): void {
  const seconds = (performance.now() - started) / 1000;
  const tally = (tallies.byCode[code] ??= {
    count: 0,
    sum: 0,
    buckets: new Float64Array(RPC_DURATION_BUCKETS.length + 1),
  });
  tally.count++;
  tally.sum += seconds;
  let bucket = 0;
  while (bucket < RPC_DURATION_BUCKETS.length && seconds > RPC_DURATION_BUCKETS[bucket]) bucket++;
  tally.buckets[bucket]++;
}

/** The code a failed call is answered with: the guard inside has made every failure a ConnectError. */
function codeOf(error: unknown): number {
  return error instanceof ConnectError ? error.code : Code.Unknown;
}
