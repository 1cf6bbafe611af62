/**
 * The autoscaler's ClickHouse reachability check: one ping per URL at most every PING_TTL_MS,
 * shared by every pipeline on that server, callers during a ping joining it.
 */
import type { ResolvedSpec } from '../../api/defaults';
import { errorMessage } from '../../apply/kafka-client';
import type { PartContext } from '../external';
import type { ClickHousePool } from './clickhouse-pool';

const PING_TTL_MS = 2_000;
const PING_TIMEOUT_MS = 3_000;

/** Cached pings by ClickHouse URL. */
export class SinkPings {
  private readonly pings = new Map<
    string,
    { at: number; error?: string; pending?: Promise<string | undefined> }
  >();

  constructor(
    private readonly clickhouse: ClickHousePool,
    private readonly now: () => number,
  ) {}

  /** Pings the pipeline's ClickHouse, at most once per PING_TTL_MS per URL; the error or undefined. */
  async ping(spec: ResolvedSpec, ctx: PartContext, t: number): Promise<string | undefined> {
    const url = spec.clickhouse.url;
    const cached = this.pings.get(url);
    if (cached?.pending) return cached.pending;
    if (cached && t - cached.at < PING_TTL_MS) return cached.error;
    const pending = (async () => {
      try {
        const client = await this.clickhouse.client(spec, ctx);
        const r = await client.ping({ select: false, abort_signal: AbortSignal.timeout(PING_TIMEOUT_MS) });
        return r.success ? undefined : errorMessage(r.error);
      } catch (err) {
        return errorMessage(err);
      }
    })();
    this.pings.set(url, { at: t, pending });
    const error = await pending;
    this.pings.set(url, { at: this.now(), error });
    return error;
  }

  /** Forgets the answers not asked for during `idleMs`. */
  sweep(t: number, idleMs: number): void {
    for (const [url, p] of this.pings) if (t - p.at > idleMs && !p.pending) this.pings.delete(url);
  }
}
