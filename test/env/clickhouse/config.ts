/**
 * The engine's XML configuration for the test bed, built from structured options (pure; the
 * harness writes it next to the data directory and the server passes it as `--config-file`).
 */
import path from 'node:path';

/** Env var that carries the server's password (instead of `--password`, which `ps` and logs would show). */
export const PASSWORD_ENV = 'LP_CLICKHOUSE_SERVER_PASSWORD';
/**
 * Env var naming a file that holds the password; the server re-reads it when it changes, so a test
 * can rotate the password without a restart, as `ALTER USER … IDENTIFIED` does on a real server.
 */
export const PASSWORD_FILE_ENV = 'LP_CLICKHOUSE_SERVER_PASSWORD_FILE';

/** What the engine configuration can switch on. */
export interface EngineConfigOptions {
  /** Engine data directory (the default disk). */
  dataDir: string;
  /** Shown in X-ClickHouse-Server-Display-Name. */
  displayName?: string;
  /**
   * Adds a local disk `cold` at `<dataDir>/cold/` and a `hot_cold` storage policy whose volumes
   * are `hot` (default disk) then `cold`, for `TTL … TO DISK 'cold'` / `TO VOLUME 'cold'` tests.
   * Default true.
   */
  coldDisk?: boolean;
  /** Raw XML appended inside <clickhouse> (test-only escape hatch; never built from user input). */
  extraXml?: string;
}

/** Path of the `cold` disk for a data directory (with the trailing slash the engine requires). */
export function coldDiskPath(dataDir: string): string {
  return path.join(dataDir, 'cold') + path.sep;
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** Builds the engine config XML for `opts`. */
export function buildEngineConfig(opts: EngineConfigOptions): string {
  const lines = [
    '<?xml version="1.0"?>',
    '<clickhouse>',
    `  <display_name>${escapeXml(opts.displayName ?? 'logpipeline-testbed')}</display_name>`,
  ];
  if (opts.coldDisk ?? true) {
    lines.push(
      '  <storage_configuration>',
      '    <disks>',
      `      <cold><type>local</type><path>${escapeXml(coldDiskPath(opts.dataDir))}</path></cold>`,
      '    </disks>',
      '    <policies>',
      '      <hot_cold>',
      '        <volumes>',
      '          <hot><disk>default</disk></hot>',
      '          <cold><disk>cold</disk></cold>',
      '        </volumes>',
      // Both disks sit on the machine's one filesystem: with the default move_factor (0.1) the
      // engine moves every part to cold once that filesystem is 90 % full, whatever the TTL says,
      // and the TTL tests would depend on the machine's free space.
      '        <move_factor>0</move_factor>',
      '      </hot_cold>',
      '    </policies>',
      '  </storage_configuration>',
    );
  }
  if (opts.extraXml) lines.push(opts.extraXml);
  lines.push('</clickhouse>', '');
  return lines.join('\n');
}
