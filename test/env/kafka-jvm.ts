/**
 * JVM start-up plumbing for the Kafka test bed: a stable classpath and dynamic AppCDS archives.
 *
 * Class loading dominates a Kafka start (~2.8 s of a ~3 s broker start, ~1 s format on an idle
 * machine). With an archive of the loaded classes a broker answers in ~1.4 s and a format takes
 * ~0.5 s. The archive is written by a JVM's exit (-XX:ArchiveClassesAtExit) to a temp name and
 * only promoted after that JVM exited cleanly, so a killed JVM never leaves a truncated archive
 * behind. Writing the broker's archive takes seconds, which is why stopBrokerJvm signals the JVM
 * itself rather than the supervisor (whose SIGKILL grace is 10 s).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { delay, isAlive, stopProcess, type ServiceProcess } from './process';

const DUMP_FLAG = '-XX:ArchiveClassesAtExit=';
/** A dump still being written by an exiting JVM is never this old; older temp files are debris. */
const STALE_DUMP_MS = 10 * 60_000;
const DUMP_STOP_GRACE_MS = 90_000;

/** Sorted explicit classpath of `libs`: a wildcard's order is unspecified and CDS needs it identical. */
export function classpath(libs: string): string {
  const jars = fs.readdirSync(libs).filter((f) => f.endsWith('.jar'));
  return jars
    .sort()
    .map((j) => path.join(libs, j))
    .join(path.delimiter);
}

function javaBinary(): string {
  const dirs = (process.env.PATH ?? '').split(path.delimiter);
  const found = dirs.map((d) => path.join(d, 'java')).find((p) => fs.existsSync(p));
  return found ? fs.realpathSync(found) : 'java';
}

/** Archive path for one JVM role, keyed by JVM build and flags (the JVM ignores a mismatched one). */
function archivePath(libs: string, role: string, flags: string[]): string {
  const java = javaBinary();
  const mtime = fs.existsSync(java) ? fs.statSync(java).mtimeMs : 0;
  const key = crypto
    .createHash('sha1')
    .update(`${java}|${mtime}|${flags.join(' ')}`)
    .digest('hex')
    .slice(0, 12);
  return path.join(libs, 'cds', `${role}-${key}.jsa`);
}

function removeStaleDumps(archive: string): void {
  const dir = path.dirname(archive);
  if (!fs.existsSync(dir)) return;
  const prefix = `${path.basename(archive)}.`;
  for (const f of fs.readdirSync(dir)) {
    if (!f.startsWith(prefix) || !f.endsWith('.tmp')) continue;
    try {
      if (Date.now() - fs.statSync(path.join(dir, f)).mtimeMs > STALE_DUMP_MS)
        fs.rmSync(path.join(dir, f), { force: true });
    } catch {
      // Removed by another bed meanwhile.
    }
  }
}

/**
 * JVM arguments for `role`: use its CDS archive when there is one, otherwise ask this JVM to
 * dump one at exit (`dump` is then the temp file to settle with settleDump).
 */
export function cdsArgs(libs: string, role: string, flags: string[]): { args: string[]; dump?: string } {
  const archive = archivePath(libs, role, flags);
  removeStaleDumps(archive);
  // Warnings (e.g. classes skipped while dumping) are noise; real CDS failures are errors.
  if (fs.existsSync(archive)) return { args: [`-XX:SharedArchiveFile=${archive}`, '-Xlog:cds=error'] };
  fs.mkdirSync(path.dirname(archive), { recursive: true });
  const dump = `${archive}.${process.pid}-${Date.now()}.tmp`;
  return { args: [`${DUMP_FLAG}${dump}`, '-Xlog:cds=error'], dump };
}

/** Promotes a dump (atomic rename) when its JVM exited cleanly; discards it otherwise. */
export function settleDump(dump: string | undefined, exitedCleanly: boolean): void {
  if (!dump || !fs.existsSync(dump)) return;
  const archive = dump.replace(/\.[^.]+\.tmp$/, '');
  if (!exitedCleanly || fs.existsSync(archive)) fs.rmSync(dump, { force: true });
  else fs.renameSync(dump, archive);
}

/** The temp archive a service's JVM will write at exit, if it was started to dump one. */
export function pendingDump(svc: ServiceProcess): string | undefined {
  return svc.args.find((a) => a.startsWith(DUMP_FLAG))?.slice(DUMP_FLAG.length);
}

function childOf(pid: number): number | undefined {
  try {
    const kids = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).map(Number);
    return kids.find((k) => k > 0);
  } catch {
    return undefined;
  }
}

/** True when the supervisor's last word on the JVM is an exit without a killing signal. */
function exitedCleanly(logFile: string): boolean {
  const text = fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : '';
  const exits = [...text.matchAll(/supervise: \S+ exited code=(\S+) signal=(\S+)/g)];
  const last = exits[exits.length - 1];
  return last !== undefined && last[1] !== 'null';
}

/** Stops a supervised JVM with SIGTERM and settles the CDS archive it may write while exiting. */
export async function stopBrokerJvm(svc: ServiceProcess): Promise<void> {
  const dump = pendingDump(svc);
  const jvm = dump ? childOf(svc.pid) : undefined;
  if (jvm !== undefined) {
    try {
      process.kill(jvm, 'SIGTERM');
    } catch {
      /* already gone */
    }
    const deadline = Date.now() + DUMP_STOP_GRACE_MS;
    while (isAlive(svc.pid) && Date.now() < deadline) await delay(100);
  }
  await stopProcess(svc, 'SIGTERM', 30_000);
  settleDump(dump, exitedCleanly(svc.logFile));
}
