import { getOption, type DescMethod, type DescService } from "@bufbuild/protobuf";
import type { Interceptor, StreamResponse, UnaryResponse } from "@connectrpc/connect";
import {
  in_flight as inFlightOption,
  in_flight_limits as inFlightLimitsOption,
  service_key as serviceKey,
  type InFlightLimit,
} from "../../../gen/pf/v1/options_pb.js";
import { problem } from "../handler/problem.js";
import { wholeSetting } from "../runtime/whole-setting.js";

/** What a caller refused for a full queue is told to wait: the calls ahead take milliseconds to seconds. */
const BUSY_RETRY_AFTER_SECONDS = 1;

/**
 * Turns to run: at most `calls` at once, the rest waiting first come first served, at most `waiting` of them.
 * Pure bookkeeping, no I/O: a turn is a promise that resolves to its release.
 */
export class Turns {
  private running = 0;
  private readonly queue: (() => void)[] = [];

  constructor(
    readonly calls: number,
    readonly waiting: number,
  ) {}

  /** The release of a turn, at once or when one frees; undefined when the queue is full (the caller is refused). */
  take(): Promise<() => void> | undefined {
    if (this.running < this.calls) {
      this.running += 1;
      return Promise.resolve(this.release());
    }
    if (this.queue.length >= this.waiting) return undefined;
    return new Promise((resolve) => this.queue.push(() => resolve(this.release())));
  }

  /** A release that frees the turn once however often called: the next waiting call runs in it. */
  private release(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.queue.shift();
      if (next) next();
      else this.running -= 1;
    };
  }

  /** Calls waiting their turn now (for tests and metrics). */
  get waitingNow(): number {
    return this.queue.length;
  }
}

/**
 * The declared in-flight limits (`pf.v1.in_flight_limits`, routes' `pf.v1.in_flight`), applied by one
 * interceptor after admission and the rate limits (a refused call takes no turn) and outside the rendering of
 * Markdown (which is the costly part a turn bounds). A unary call holds its turn until its handler answered; a
 * server stream until it ends, however it ends. Per instance, in memory.
 */
export class InFlightLimits {
  private readonly byMethod = new Map<DescMethod, { counter: string; turns: Turns }>();

  constructor(services: readonly DescService[], env: Record<string, string | undefined>) {
    const turnsByCounter = new Map<string, Turns>();
    for (const service of services) {
      const declared = new Map(getOption(service, inFlightLimitsOption).map((limit) => [limit.name, limit]));
      for (const method of service.methods) {
        const name = getOption(method, inFlightOption);
        if (name === "") continue;
        const limit = declared.get(name);
        if (!limit)
          throw new Error(
            `${service.typeName}.${method.name} names the in-flight limit "${name}", which its service does not declare (pf.v1.in_flight_limits)`,
          );
        const counter = `${getOption(service, serviceKey)}.${name}`;
        let turns = turnsByCounter.get(counter);
        if (!turns) {
          turns = turnsOf(counter, limit, env);
          turnsByCounter.set(counter, turns);
        }
        this.byMethod.set(method, { counter, turns });
      }
    }
  }

  interceptor(): Interceptor {
    return (next) => async (req) => {
      const bound = this.byMethod.get(req.method);
      if (!bound) return next(req);
      const turn = bound.turns.take();
      if (!turn) {
        throw problem(429, "service.busy", `Too many ${bound.counter} calls at once; try again shortly.`, {
          rule: bound.counter,
          retry_after_seconds: BUSY_RETRY_AFTER_SECONDS,
        });
      }
      const release = await turn;
      let answer: UnaryResponse | StreamResponse;
      try {
        answer = await next(req);
      } catch (error) {
        release();
        throw error;
      }
      if (!answer.stream) {
        release();
        return answer;
      }
      return { ...answer, message: releasedAtEnd(answer.message, release) };
    };
  }
}

function turnsOf(counter: string, limit: InFlightLimit, env: Record<string, string | undefined>): Turns {
  if (limit.calls < 1 || limit.setting === "")
    throw new Error(`in-flight limit ${counter}: declare calls (at least 1) and the setting that overrides it`);
  return new Turns(wholeSetting(env, limit.setting, limit.calls, 1), limit.waiting);
}

async function* releasedAtEnd<T>(messages: AsyncIterable<T>, release: () => void): AsyncIterable<T> {
  try {
    yield* messages;
  } finally {
    release();
  }
}
