/**
 * Leader election on a coordination.k8s.io/v1 Lease, with client-go's timing model: a candidate
 * takes the lease when its holder has not renewed it for `leaseDuration` (measured on OUR clock from
 * when we last saw the record change, so clock skew between instances does not matter), the leader
 * renews every `retryPeriod` and gives up leadership if it could not renew for `renewDeadline`.
 * Writes use the Lease's resourceVersion, so two candidates can never both win. On a graceful stop
 * the leader releases the lease, so the next instance takes over within one retry period.
 */
import { isStatus, type KubeClient } from '../apply/kube-rest';
import { sleep } from '../../../common/src/timing';

/** Lease location, identity, timing and callbacks. */
export interface LeaderElectionOptions {
  client: KubeClient;
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  onStartedLeading(): void;
  onStoppedLeading(): void;
  onError?(err: Error): void;
}

interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

interface Lease {
  apiVersion: 'coordination.k8s.io/v1';
  kind: 'Lease';
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec: LeaseSpec;
}

/** MicroTime as the apiserver parses it: RFC 3339 with exactly six fractional digits. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** Runs one candidate; `start` returns at once, `stop` releases the lease if held. */
export class LeaderElector {
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly abort = new AbortController();
  private observedRecord = '';
  private observedAt = 0;
  private leading = false;
  /** The last attempt saw another instance holding a valid lease: leadership is lost for sure. */
  private sawOtherHolder = false;
  private loop?: Promise<void>;

  constructor(private readonly opts: LeaderElectionOptions) {
    this.leaseDurationMs = opts.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = opts.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = opts.retryPeriodMs ?? 2_000;
    if (!(this.leaseDurationMs > this.renewDeadlineMs && this.renewDeadlineMs > this.retryPeriodMs)) {
      throw new Error('leader election needs leaseDuration > renewDeadline > retryPeriod');
    }
  }

  /** True while this instance holds the lease. */
  isLeader(): boolean {
    return this.leading;
  }

  /** Starts campaigning in the background (and again after a lost leadership). */
  start(): void {
    this.loop ??= this.run();
  }

  /** Stops campaigning; a leader releases the lease and gets onStoppedLeading. */
  async stop(): Promise<void> {
    this.abort.abort();
    await this.loop;
  }

  private get path(): string {
    return `/apis/coordination.k8s.io/v1/namespaces/${this.opts.namespace}/leases/${this.opts.name}`;
  }

  private async run(): Promise<void> {
    const signal = this.abort.signal;
    while (!signal.aborted) {
      if (!(await this.attempt())) {
        await sleep(this.retryPeriodMs * (1 + Math.random() * 0.2), signal);
        continue;
      }
      this.leading = true;
      this.opts.onStartedLeading();
      let lastRenew = Date.now();
      while (!signal.aborted) {
        await sleep(this.retryPeriodMs, signal);
        if (signal.aborted) break;
        if (await this.attempt()) lastRenew = Date.now();
        // Another holder is definitive (not a transient error): stop at once, not after renewDeadline.
        else if (this.sawOtherHolder || Date.now() - lastRenew >= this.renewDeadlineMs) break;
      }
      this.leading = false;
      if (signal.aborted) await this.release();
      this.opts.onStoppedLeading();
    }
  }

  /** One acquire-or-renew round; true when we hold the lease afterwards. */
  private async attempt(): Promise<boolean> {
    try {
      return await this.tryAcquireOrRenew();
    } catch (err) {
      this.opts.onError?.(err as Error);
      return false;
    }
  }

  /**
   * Reads the Lease now (not the cached belief): true only while this instance leads and the
   * Lease still names it. Checked immediately before destructive statements.
   */
  async confirmLeadership(): Promise<boolean> {
    if (!this.leading) return false;
    try {
      const lease = await this.opts.client.request<Lease>('GET', this.path, {
        timeoutMs: this.retryPeriodMs,
      });
      return this.leading && lease.spec?.holderIdentity === this.opts.identity;
    } catch (err) {
      this.opts.onError?.(err as Error);
      return false;
    }
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const now = Date.now();
    this.sawOtherHolder = false;
    const { client, identity } = this.opts;
    let lease: Lease;
    try {
      lease = await client.request<Lease>('GET', this.path, { timeoutMs: this.retryPeriodMs });
    } catch (err) {
      if (!isStatus(err, 404)) throw err;
      return this.create(now);
    }
    const spec = lease.spec ?? {};
    const record = JSON.stringify([spec.holderIdentity, spec.renewTime, spec.leaseTransitions]);
    if (record !== this.observedRecord) {
      this.observedRecord = record;
      this.observedAt = now;
    }
    const holder = spec.holderIdentity ?? '';
    const durationMs = (spec.leaseDurationSeconds ?? 0) * 1000;
    if (holder && holder !== identity && this.observedAt + durationMs > now) {
      this.sawOtherHolder = true;
      return false;
    }
    const mine = holder === identity;
    const next: LeaseSpec = {
      holderIdentity: identity,
      leaseDurationSeconds: Math.ceil(this.leaseDurationMs / 1000),
      acquireTime: mine && spec.acquireTime ? spec.acquireTime : microTime(now),
      renewTime: microTime(now),
      leaseTransitions: mine ? (spec.leaseTransitions ?? 0) : (spec.leaseTransitions ?? 0) + 1,
    };
    return this.write({ ...lease, spec: next }, now);
  }

  private async create(now: number): Promise<boolean> {
    const lease: Lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: this.opts.name, namespace: this.opts.namespace },
      spec: {
        holderIdentity: this.opts.identity,
        leaseDurationSeconds: Math.ceil(this.leaseDurationMs / 1000),
        acquireTime: microTime(now),
        renewTime: microTime(now),
        leaseTransitions: 0,
      },
    };
    try {
      await this.opts.client.request(
        'POST',
        `/apis/coordination.k8s.io/v1/namespaces/${this.opts.namespace}/leases`,
        { body: lease, timeoutMs: this.retryPeriodMs },
      );
      this.observe(lease.spec, now);
      return true;
    } catch (err) {
      if (isStatus(err, 409)) return false; // another candidate created it first
      throw err;
    }
  }

  /** PUT with the read resourceVersion: a concurrent writer makes this fail with 409. */
  private async write(lease: Lease, now: number): Promise<boolean> {
    try {
      await this.opts.client.request('PUT', this.path, { body: lease, timeoutMs: this.retryPeriodMs });
      this.observe(lease.spec, now);
      return true;
    } catch (err) {
      if (isStatus(err, 409)) return false;
      throw err;
    }
  }

  private observe(spec: LeaseSpec, now: number): void {
    this.observedRecord = JSON.stringify([spec.holderIdentity, spec.renewTime, spec.leaseTransitions]);
    this.observedAt = now;
  }

  /** Hands the lease back (empty holder, 1 s duration) so a standby need not wait for expiry. */
  private async release(): Promise<void> {
    try {
      const lease = await this.opts.client.request<Lease>('GET', this.path, {
        timeoutMs: this.retryPeriodMs,
      });
      if (lease.spec?.holderIdentity !== this.opts.identity) return;
      const now = microTime(Date.now());
      const spec: LeaseSpec = {
        holderIdentity: '',
        leaseDurationSeconds: 1,
        acquireTime: now,
        renewTime: now,
        leaseTransitions: lease.spec.leaseTransitions,
      };
      await this.opts.client.request('PUT', this.path, {
        body: { ...lease, spec },
        timeoutMs: this.retryPeriodMs,
      });
    } catch (err) {
      this.opts.onError?.(err as Error);
    }
  }
}
