/**
 * Fixed-window rate limits per caller (docs/marketplace.md#rate-limits): a window starts with a caller's first request
 * and lasts `windowMs`; each answered request counts, refused ones do not.
 */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** When the window ends, in ms since the epoch. */
  resetAt: number;
}

export class RateLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(
    private readonly windowMs: number,
    private readonly clock: () => number,
  ) {}

  take(key: string, limit: number): RateDecision {
    const now = this.clock();
    let window = this.windows.get(key);
    if (!window || now >= window.start + this.windowMs) {
      window = { start: now, count: 0 };
      this.windows.set(key, window);
    }
    const resetAt = window.start + this.windowMs;
    if (window.count >= limit) return { allowed: false, limit, remaining: 0, resetAt };
    window.count += 1;
    return { allowed: true, limit, remaining: limit - window.count, resetAt };
  }

  /** The headers of docs/decisions.md#marketplace-api, on every answer to an identified caller. */
  headers(decision: RateDecision): Record<string, string> {
    const now = this.clock();
    const headers: Record<string, string> = {
      'x-ratelimit-limit': String(decision.limit),
      'x-ratelimit-remaining': String(decision.remaining),
      // Unix seconds, as GitHub's API does.
      'x-ratelimit-reset': String(Math.ceil(decision.resetAt / 1000)),
    };
    if (!decision.allowed) headers['retry-after'] = String(Math.max(1, Math.ceil((decision.resetAt - now) / 1000)));
    return headers;
  }
}
