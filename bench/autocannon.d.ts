// The part of autocannon's API the load child uses (the package ships no types).
declare module "autocannon" {
  import type { EventEmitter } from "node:events";

  namespace autocannon {
    interface Options {
      url: string;
      connections?: number;
      /** Seconds. */
      duration?: number;
      headers?: Record<string, string>;
      method?: string;
      body?: string;
      /** Requests each connection sends in turn (paths of `url`'s host), instead of `url` alone. */
      requests?: { path: string }[];
    }
    interface Result {
      /** Seconds, to the hundredth. */
      duration: number;
      errors: number;
      timeouts: number;
      non2xx: number;
    }
    /** Emits "response" (client, statusCode, bytes, milliseconds) per answer; settles with the result. */
    interface Instance extends EventEmitter, PromiseLike<Result> {}
  }

  function autocannon(options: autocannon.Options): autocannon.Instance;
  export = autocannon;
}
