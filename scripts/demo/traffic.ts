/**
 * The demo's traffic: Kafka message values of LF-joined firewall lines in the vendor mix of the
 * sample generator (FortiGate, PAN-OS, Cisco ASA, iptables, CEF, JSON, RFC 5424/3164), stamped
 * with the current time, a share of them mutated into malformed lines. Pure and deterministic
 * from the seed and the clock it is given; it also picks the IP the closing legal query asks for.
 */
import { generateSampleLines, mutateLine, Rng } from '../../test/fixtures/samples';
import { LineParser, type ParserOptions } from '../../consumer/src/parse/parser';
import { recordToObject } from '../../consumer/src/parse/to-json';

/** How traffic is shaped. */
export interface TrafficOptions {
  linesPerMessage: number;
  malformedRatio: number;
  seed: number;
  /**
   * How the pipeline parses (format, zone, required fields; default `auto`): the lines that mention
   * the query IP are parsed the same way to know which of them are records OF it (source or
   * destination), which is what the legal query asks.
   */
  parser?: Pick<ParserOptions, 'format' | 'timezone' | 'requiredFields'>;
}

/** Messages made by one `next` call and what they contain. */
export interface TrafficChunk {
  messages: Buffer[];
  lines: number;
  /** Lines mutated (most of them cannot be parsed and end in the dead-letter queue). */
  malformed: number;
  bytes: number;
}

const LF = Buffer.from('\n');
// A subscriber behind the NAT from the 192.168/16 pool: a few thousand addresses recur often
// enough that "all records of X" returns a handful of rows even in a short run.
const SRC_IP_RE = /srcip=(192\.168\.\d{1,3}\.\d{1,3}) /;

/** True for ASCII digits and dots, the bytes that would extend an IPv4 literal. */
function extendsIp(byte: number | undefined): boolean {
  return byte !== undefined && ((byte >= 0x30 && byte <= 0x39) || byte === 0x2e);
}

/** True when `line` holds `ip` as a whole token (not as a prefix of a longer address). */
export function mentionsIp(line: Buffer, ip: Buffer): boolean {
  for (let at = line.indexOf(ip); at >= 0; at = line.indexOf(ip, at + 1)) {
    if (!extendsIp(line[at - 1]) && !extendsIp(line[at + ip.length])) return true;
  }
  return false;
}

/** A malformed line never holds LF (it would split into two lines) and is never empty. */
function malformed(line: Buffer, r: Rng): Buffer {
  const bad = mutateLine(line, r, false);
  // An empty last line of a message would vanish with its trailing LF and break the line count.
  return bad.length > 0 ? bad : line.subarray(0, 1);
}

/** Stateful generator of demo traffic; one instance per run. */
export class TrafficGenerator {
  private readonly mutations: Rng;
  private messageIndex = 0;
  private ip?: string;
  private ipBytes?: Buffer;
  private mentions = 0;
  private records = 0;
  private readonly parser: LineParser;

  /** Uses `opts` for every chunk. */
  constructor(private readonly opts: TrafficOptions) {
    this.mutations = new Rng(opts.seed ^ 0x5eed);
    this.parser = new LineParser({ format: 'auto', timezone: 'UTC', ...opts.parser });
  }

  /** The subject IP of the legal query (a 192.168/16 source of an unmutated FortiGate line), once seen. */
  get queryIp(): string | undefined {
    return this.ip;
  }

  /** Unmutated lines that carry the query IP as a token, counted since it was picked. */
  get queryIpMentions(): number {
    return this.mentions;
  }

  /**
   * Of those, the lines the pipeline's parser stores with the IP as source or destination address:
   * exactly what the legal query must return (the others name it elsewhere, e.g. inside an RFC 5424
   * structured-data element the generic parser keeps as text).
   */
  get queryIpRecords(): number {
    return this.records;
  }

  /** `messageCount` messages whose lines are stamped from `nowMs` on (about 1 ms apart). */
  next(messageCount: number, nowMs: number): TrafficChunk {
    const chunk: TrafficChunk = { messages: [], lines: 0, malformed: 0, bytes: 0 };
    for (let m = 0; m < messageCount; m++) {
      const seed = (Math.imul(this.opts.seed + 1, 0x9e3779b1) + this.messageIndex++) >>> 0;
      const lines = generateSampleLines('mix', this.opts.linesPerMessage, { seed, startMs: nowMs });
      const parts: Buffer[] = [];
      for (const line of lines) {
        const bad = this.opts.malformedRatio > 0 && this.mutations.chance(this.opts.malformedRatio);
        if (bad) chunk.malformed++;
        else this.observe(line);
        if (parts.length > 0) parts.push(LF);
        parts.push(bad ? malformed(line, this.mutations) : line);
      }
      const value = Buffer.concat(parts);
      chunk.messages.push(value);
      chunk.lines += lines.length;
      chunk.bytes += value.length;
    }
    return chunk;
  }

  private observe(line: Buffer): void {
    if (!this.ipBytes) {
      const m = SRC_IP_RE.exec(line.toString('latin1'));
      if (!m) return;
      this.ip = m[1];
      this.ipBytes = Buffer.from(m[1], 'latin1');
    }
    if (!mentionsIp(line, this.ipBytes)) return;
    this.mentions++;
    if (this.isRecordOf(line, this.ip!)) this.records++;
  }

  /** True when `line` parses into a record whose source or destination address is `ip`. */
  private isRecordOf(line: Buffer, ip: string): boolean {
    this.parser.setReferenceTime(Date.now());
    if (this.parser.parse(line, 0, line.length) !== null) return false;
    const row = recordToObject(this.parser.record);
    const plain = (v: unknown) => String(v ?? '').replace(/^::ffff:/, '');
    return plain(row.src_ip) === ip || plain(row.dst_ip) === ip;
  }
}
