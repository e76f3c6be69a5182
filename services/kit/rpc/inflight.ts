import type { Interceptor } from "@connectrpc/connect";

/**
 * Counts the calls being served, so a stopping host can let them finish
 * before it closes the database under them.
 */
export class InflightCalls {
  private count = 0;
  private idle?: () => void;

  interceptor(): Interceptor {
    return (next) => async (req) => {
      this.count++;
      try {
        return await next(req);
      } finally {
        if (--this.count === 0) this.idle?.();
      }
    };
  }

  /** Resolves once no call is being served, or after `limitMs`. */
  drained(limitMs: number): Promise<void> {
    if (this.count === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, limitMs);
      this.idle = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
