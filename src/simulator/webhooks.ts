/**
 * Signed webhook deliveries (docs/marketplace.md#webhooks, docs/decisions.md#webhooks): `POST {webhook_url}` with body
 * `{event, timestamp, data}` and `X-Service-Signature: sha256=<hex>`. A delivery that is not
 * answered with 2xx is retried with exponential backoff, up to `maxAttempts` attempts; each attempt
 * is re-stamped and re-signed, so a receiver's timestamp tolerance never rejects a late retry.
 */
import { linkSignals } from '../server/lib/abort.js';
import type { Clock } from '../server/lib/clock.js';
import { randomToken } from '../server/oauth.js';
import { signWebhookBody } from '../server/signers.js';
import { utcSeconds } from './catalog.js';
import type { DeliveryAttempt, DeliveryRecord, SimulatorState } from './state.js';

export interface WebhookSettings {
  maxAttempts: number;
  /** Wait before attempt `n + 1` after attempt `n` failed (n starts at 1). */
  backoffMs: (attempt: number) => number;
  /** Per-attempt timeout. */
  timeoutMs: number;
}

const ANSWER_PREVIEW = 500;

/** The error of an attempt that `close()` stopped while it waited for the receiver. */
export const SHUT_DOWN = 'stopped: the simulator is shutting down';

export class WebhookSender {
  /** Aborted by `close()`: stops waiting retries and in-flight attempts. */
  private readonly stopped = new AbortController();

  constructor(
    private readonly state: SimulatorState,
    private readonly secret: string,
    private readonly settings: WebhookSettings,
    private readonly clock: Clock,
  ) {}

  /**
   * Delivers one event and resolves once the receiver accepted it or every attempt failed. Without
   * a configured webhook URL the delivery is recorded as `skipped`.
   */
  async send(event: string, data: Record<string, unknown>): Promise<DeliveryRecord> {
    const url = this.state.config.webhookUrl;
    const record: DeliveryRecord = {
      id: randomToken('dlv_', 9),
      event,
      data,
      url,
      outcome: url ? 'pending' : 'skipped',
      attempts: [],
      created_at: utcSeconds(this.clock.now()),
    };
    this.state.recordDelivery(record);
    if (url) {
      for (let attempt = 1; attempt <= this.settings.maxAttempts; attempt++) {
        const result = await this.attempt(url, event, data);
        record.attempts.push(result);
        if (result.status !== null && result.status >= 200 && result.status < 300) {
          record.outcome = 'delivered';
          break;
        }
        // By the simulator's clock, which tests drive. `close()` ends the wait early; the delivery
        // is then recorded as failed.
        if (attempt < this.settings.maxAttempts) await this.clock.sleep(this.settings.backoffMs(attempt), this.stopped.signal).catch(() => undefined);
        if (attempt === this.settings.maxAttempts || this.stopped.signal.aborted) {
          record.outcome = 'failed';
          break;
        }
      }
    }
    this.state.emit({ type: 'delivery', data: record });
    return record;
  }

  close(): void {
    this.stopped.abort();
  }

  private async attempt(url: string, event: string, data: Record<string, unknown>): Promise<DeliveryAttempt> {
    // Milliseconds, not the seconds of expires_at: the marketplace gives deliveries no id (docs/decisions.md#webhooks), so two
    // identical events stamped in the same second would be indistinguishable from a replay.
    const at = new Date(this.clock.now()).toISOString();
    const body = JSON.stringify({ event, timestamp: at, data });
    const started = performance.now();
    const linked = linkSignals(AbortSignal.timeout(this.settings.timeoutMs), this.stopped.signal);
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-service-signature': signWebhookBody(body, this.secret), 'user-agent': 'mpkit-simulator' },
        body,
        redirect: 'manual',
        signal: linked.signal,
      });
      const text = await response.text().catch(() => '');
      return { at, status: response.status, error: null, body: text.slice(0, ANSWER_PREVIEW), duration_ms: elapsed(started) };
    } catch (error) {
      // An attempt cut short by `close()` did not fail at the receiver: say why it ended.
      if (this.stopped.signal.aborted) return { at, status: null, error: SHUT_DOWN, body: null, duration_ms: elapsed(started) };
      const reason = error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);
      return { at, status: null, error: reason, body: null, duration_ms: elapsed(started) };
    } finally {
      linked.dispose();
    }
  }
}

/** Default backoff: 1 s, 2 s, 4 s, 8 s between the five attempts. */
export function exponentialBackoff(baseMs: number): (attempt: number) => number {
  return (attempt) => baseMs * 2 ** (attempt - 1);
}

function elapsed(started: number): number {
  return Math.round(performance.now() - started);
}
