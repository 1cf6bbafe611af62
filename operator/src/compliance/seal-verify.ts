/**
 * `logpipeline verify --seal`: checks an exported seal offline, exactly as the auditor's openssl
 * procedure does (docs/compliance.md): the manifest is canonical and its Ed25519 signature verifies
 * with the trusted key, the RFC 3161 token covers SHA-256 of the manifest and chains to a trusted
 * TSA CA (genTime close to the manifest's created_at), and the decompressed export has the SHA-256,
 * line count and size the manifest records.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { KeyObject, X509Certificate } from 'node:crypto';
import { verifyTimeStampToken } from '../../../common/src/integrity/timestamp-token';
import { digestExportFile, type ExportDigest } from './seal-export';
import { checkManifest, manifestDigest, type SealManifest } from './seal-manifest';

/** Trust anchors of a seal check. */
export interface SealVerifyOptions {
  publicKey?: KeyObject;
  /** Accept an unchecked signature (no public key at hand); otherwise a missing key is a finding. */
  skipSignatureCheck?: boolean;
  tsaCAs?: X509Certificate[];
  /** Largest accepted |genTime − created_at|. Default 10 minutes. */
  tsaToleranceMs?: number;
}

/** Outcome: problems found (empty = verified), the manifest and what the export hashed to. */
export interface SealVerifyReport {
  manifestFile: string;
  manifest?: SealManifest;
  export?: ExportDigest;
  problems: string[];
  notices: string[];
  ok: boolean;
}

/** The manifest file of a seal given as a directory (exactly one `*.manifest.json`) or the file itself. */
export function findManifest(target: string): string {
  if (!fs.statSync(target).isDirectory()) return target;
  const found = fs.readdirSync(target).filter((f) => f.endsWith('.manifest.json'));
  if (found.length !== 1)
    throw new Error(`${target} holds ${found.length} *.manifest.json files: name the manifest file itself`);
  return path.join(target, found[0]);
}

function checkToken(
  manifestFile: string,
  bytes: Buffer,
  manifest: SealManifest | undefined,
  opts: SealVerifyOptions,
  report: SealVerifyReport,
): void {
  const tokenFile = manifestFile.replace(/\.json$/, '.tst');
  if (!fs.existsSync(tokenFile)) {
    report.problems.push(`no timestamp token ${path.basename(tokenFile)}`);
    return;
  }
  if (!opts.tsaCAs) {
    report.notices.push('timestamp token not checked: no --tsa-ca given');
    return;
  }
  const v = verifyTimeStampToken(fs.readFileSync(tokenFile), manifestDigest(bytes), opts.tsaCAs);
  if (v.problem) report.problems.push(`timestamp token: ${v.problem}`);
  else if (manifest && v.info) {
    const skew = Math.abs(v.info.genTimeMs - manifest.created_at);
    if (skew > (opts.tsaToleranceMs ?? 600_000))
      report.problems.push(
        `timestamp genTime ${new Date(v.info.genTimeMs).toISOString()} is ${Math.round(skew / 1000)} s from the manifest's created_at`,
      );
  }
}

async function checkExport(dir: string, manifest: SealManifest, report: SealVerifyReport): Promise<void> {
  const file = path.join(dir, path.basename(manifest.export.file));
  if (!fs.existsSync(file)) {
    report.problems.push(`export file ${manifest.export.file} is missing`);
    return;
  }
  try {
    report.export = await digestExportFile(file);
  } catch (err) {
    report.problems.push(
      `export ${manifest.export.file} is not a valid gzip stream: ${(err as Error).message}`,
    );
    return;
  }
  const got = report.export;
  if (got.sha256 !== manifest.export.sha256)
    report.problems.push(
      `export SHA-256 ${got.sha256} differs from the manifest's ${manifest.export.sha256}`,
    );
  if (got.rows !== manifest.export.rows)
    report.problems.push(`export has ${got.rows} rows, the manifest records ${manifest.export.rows}`);
  if (got.bytes !== manifest.export.bytes)
    report.problems.push(`export has ${got.bytes} bytes, the manifest records ${manifest.export.bytes}`);
}

/** Verifies an exported seal (directory or manifest path). Never throws for findings. */
export async function verifySealFiles(target: string, opts: SealVerifyOptions): Promise<SealVerifyReport> {
  const manifestFile = findManifest(target);
  const report: SealVerifyReport = { manifestFile, problems: [], notices: [], ok: false };
  const bytes = fs.readFileSync(manifestFile);
  const sigFile = manifestFile.replace(/\.json$/, '.sig');
  const signature = fs.existsSync(sigFile) ? fs.readFileSync(sigFile) : undefined;
  if (!signature) report.problems.push(`no signature ${path.basename(sigFile)}`);
  const checked = checkManifest(bytes, signature ?? Buffer.alloc(64), opts.publicKey);
  report.manifest = checked.manifest;
  if (checked.problem && signature) report.problems.push(checked.problem);
  if (!opts.publicKey && !opts.skipSignatureCheck)
    report.problems.push('signature not checked: give --public-key (or --no-signature-check)');
  else if (!opts.publicKey) report.notices.push('signature not checked (--no-signature-check)');
  checkToken(manifestFile, bytes, checked.manifest, opts, report);
  if (checked.manifest) await checkExport(path.dirname(manifestFile), checked.manifest, report);
  report.ok = report.problems.length === 0;
  return report;
}

/** Human-readable report. */
export function formatSealReport(r: SealVerifyReport): string {
  const m = r.manifest;
  const head = m ? `${m.database}.${m.table} ${m.day}: ${r.export?.rows ?? '?'} rows` : r.manifestFile;
  const lines = [`${r.ok ? 'OK' : 'FAILED'}: seal of ${head}`];
  for (const p of r.problems) lines.push(`  finding: ${p}`);
  for (const n of r.notices) lines.push(`  notice: ${n}`);
  return lines.join('\n') + '\n';
}
