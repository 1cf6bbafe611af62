/**
 * A test's producer for one fresh pipeline topic written only by that test: kcat (librdkafka, the
 * client users run) writes each value as one message, and the offsets it got are tracked per
 * partition, so a test can say which offsets must become rows and which dead letters.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generateSampleLines } from './fixtures/samples';

/** How kcat writes one call's values. */
export interface KcatProduceOptions {
  /** `name=value` headers on every message of the call. */
  headers?: string[];
  /** librdkafka's compression codec for the call's batches (`-z`); none by default. */
  codec?: string;
  /** Extra `-X key=value` producer properties. */
  properties?: string[];
}

/** Produces to one topic with kcat and records the good lines it wrote, as storedKeys() reports rows. */
export class KcatTopic {
  /** Next offset of each partition (the topic is fresh and only this producer writes to it). */
  private readonly next: number[];
  /** Where each value is written for kcat to read (one file per message). */
  private readonly dir: string;
  /** `partition:offset:line` of every good line produced. */
  readonly expectedRows: string[] = [];

  constructor(
    private readonly bootstrap: string,
    private readonly topic: string,
    partitions: number,
  ) {
    this.next = new Array<number>(partitions).fill(0);
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lp-kcat-'));
  }

  /** Produces each value as one message in one kcat call (its own batches); returns the first offset. */
  produce(partition: number, values: Buffer[], options: KcatProduceOptions = {}): number {
    const files = values.map((v, i) => {
      const f = path.join(this.dir, `${partition}-${this.next[partition]}-${i}`);
      fs.writeFileSync(f, v);
      return f;
    });
    const args = ['-P', '-b', this.bootstrap, '-t', this.topic, '-p', String(partition)];
    if (options.codec) args.push('-z', options.codec);
    for (const h of options.headers ?? []) args.push('-H', h);
    for (const x of options.properties ?? []) args.push('-X', x);
    execFileSync('kcat', [...args, ...files], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
    const first = this.next[partition];
    this.next[partition] += values.length;
    return first;
  }

  /** Produces `count` good sample lines, one message each, and expects each as a row. */
  good(partition: number, count: number, seed: number): void {
    const lines = generateSampleLines('mix', count, { seed });
    const first = this.produce(partition, lines);
    lines.forEach((l, i) => this.expectRow(partition, first + i, l));
  }

  /** Records that `line`, read from `partition`/`offset`, must be stored exactly once. */
  expectRow(partition: number, offset: number, line: Buffer): void {
    this.expectedRows.push(`${partition}:${offset}:${line.toString('latin1')}`);
  }

  /** Removes the value files. */
  close(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
