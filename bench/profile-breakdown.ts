/**
 * Summarises a V8 `--cpu-prof` profile of a worker into the stages of the ingest path: Kafka
 * fetch and client, Kafka record decode, decompression, parse, encode, insert, integrity, our
 * bookkeeping, metrics, GC. Self time of native and Node-internal frames is charged to the nearest
 * project or library caller on the stack (a socket write belongs to whoever sent it). Shares are of
 * busy time (idle excluded); under load the sampler also charges preemption to the running frame.
 */
import fs from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Stage -> milliseconds and share of busy time, plus the top self-time functions. */
export interface ProfileBreakdown {
  busyMs: number;
  stages: Record<string, { ms: number; share: number }>;
  top: Array<{ fn: string; stage: string; ms: number }>;
}

const STAGES: Array<[string, RegExp]> = [
  [
    'kafkaRecordDecode',
    /kafkajs\/src\/protocol\/(requests\/fetch|recordBatch|message|decoder|crc32)|common\/src\/kafka\/record-decoder/,
  ],
  ['kafkaFetchAndClient', /kafkajs/],
  ['decompression', /lz4|snappy|zstd|kafka\/codecs|-codec\.js|zlib/],
  ['parse', /consumer\/src\/parse\//],
  ['encode', /consumer\/src\/encode\//],
  ['insert', /@clickhouse|consumer\/src\/sink\//],
  // canonical-ip serves the encoder (IPv6 bytes): its time goes to the caller's stage.
  ['integrity', /consumer\/src\/integrity|common\/src\/integrity\/(?!canonical-ip)/],
  ['workerBookkeeping', /consumer\/src\/|common\/src\//],
  ['metrics', /prom-client/],
];

function stageOf(url: string, fn: string): string | undefined {
  if (/canonical-ip/.test(url)) return undefined;
  if (fn === '(garbage collector)') return 'gc';
  if (fn === '(idle)') return 'idle';
  if (fn === '(program)') return 'program';
  // Module loading and compilation at start-up (not part of the steady-state throughput).
  if (/^node:internal\/(modules|main)\//.test(url)) return 'startup';
  for (const [name, re] of STAGES) if (re.test(url)) return name;
  return undefined;
}

/** Reads and summarises one .cpuprofile file. */
export function profileBreakdown(file: string, topN = 15): ProfileBreakdown {
  const p = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<number, number>();
  for (let i = 0; i < p.samples.length; i++)
    self.set(p.samples[i], (self.get(p.samples[i]) ?? 0) + (p.timeDeltas[i] ?? 0));
  const stageCache = new Map<number, string>();
  const stageOfNode = (id: number): string => {
    const cached = stageCache.get(id);
    if (cached) return cached;
    let found = 'nodeInternalsNoProjectCaller';
    for (let n = byId.get(id); n; n = byId.get(parent.get(n.id) ?? -1)) {
      const s = stageOf(n.callFrame.url, n.callFrame.functionName);
      if (s) {
        found = s;
        break;
      }
    }
    stageCache.set(id, found);
    return found;
  };
  const stages = new Map<string, number>();
  const fns = new Map<string, { us: number; stage: string }>();
  for (const [id, us] of self) {
    const stage = stageOfNode(id);
    stages.set(stage, (stages.get(stage) ?? 0) + us);
    const frame = (cf: ProfileNode['callFrame']) =>
      `${cf.functionName || '(anonymous)'} ${cf.url.replace(/.*node_modules\//, '').replace(/.*\/dist\//, '')}:${cf.lineNumber + 1}`;
    const cf = byId.get(id)!.callFrame;
    // Native code has no URL: name it by its JS caller so a memcpy under the encoder is not merged
    // with a socket write under the HTTP client (and given the stage of whichever came first).
    const caller = cf.url === '' ? byId.get(parent.get(id) ?? -1) : undefined;
    const key = caller ? `${frame(cf)} <- ${frame(caller.callFrame)}` : frame(cf);
    const e = fns.get(`${stage} ${key}`) ?? { us: 0, stage };
    e.us += us;
    fns.set(`${stage} ${key}`, e);
  }
  stages.delete('idle');
  const busy = [...stages.values()].reduce((a, b) => a + b, 0);
  const out: ProfileBreakdown = { busyMs: Math.round(busy / 1e3), stages: {}, top: [] };
  for (const [s, us] of [...stages].sort((a, b) => b[1] - a[1]))
    out.stages[s] = { ms: Math.round(us / 1e3), share: Math.round((1000 * us) / busy) / 1000 };
  out.top = [...fns]
    .filter(([, e]) => e.stage !== 'idle')
    .sort((a, b) => b[1].us - a[1].us)
    .slice(0, topN)
    .map(([fn, e]) => ({ fn: fn.slice(e.stage.length + 1), stage: e.stage, ms: Math.round(e.us / 1e3) }));
  return out;
}

if (require.main === module) {
  process.stdout.write(`${JSON.stringify(profileBreakdown(process.argv[2], 40), null, 2)}\n`);
}
