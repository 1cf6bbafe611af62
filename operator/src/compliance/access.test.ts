import type { ClickHouseClient } from '@clickhouse/client';
import { clickhouseStatementCounts } from '../apply/clickhouse-client';
import { resolved } from '../../../test/fixtures/clickhouse-testing';
import { AccessApplier, buildAccessStatements, buildDropRolesStatement, pipelineRoles } from './access';

const users = {
  writer: { username: 'fw_writer', password: 'w'.repeat(20) },
  auditor: { username: 'fw_auditor', password: 'a'.repeat(20) },
};

/** Records the statements a client was asked to run (unit level: no server needed). */
function recordingClient(): { client: ClickHouseClient; sent: string[] } {
  const sent: string[] = [];
  const client = { command: async ({ query }: { query: string }) => void sent.push(query) };
  return { client: client as unknown as ClickHouseClient, sent };
}

describe('access statements', () => {
  it('grants privileges to per-pipeline roles and the roles (not privileges) to the users', () => {
    const spec = resolved({}, { integrity: { enabled: true } });
    const roles = pipelineRoles(spec);
    const sql = buildAccessStatements(spec, users);
    expect(sql).toContain(
      `GRANT INSERT ON \`logs\`.\`fw\`, INSERT ON \`logs\`.\`fw_dlq\`, INSERT ON \`logs\`.\`fw_parser_stats\`, INSERT, SELECT ON \`logs\`.\`fw_integrity\`, INSERT, SELECT ON \`logs\`.\`fw_checkpoints\` TO \`${roles.writer}\` WITH REPLACE OPTION`,
    );
    expect(sql).toContain(`GRANT \`${roles.writer}\` TO \`fw_writer\``);
    expect(sql).toContain(`GRANT SELECT ON \`logs\`.* TO \`${roles.auditor}\` WITH REPLACE OPTION`);
    expect(sql).toContain(`GRANT \`${roles.auditor}\` TO \`fw_auditor\``);
    // REPLACE never targets a user: a shared writer keeps every pipeline's role.
    for (const s of sql.filter((x) => x.includes('REPLACE OPTION'))) expect(s).toMatch(/TO `lp_[^`]+`/);
    expect(sql.join('\n')).not.toContain('w'.repeat(20));
    expect(sql.find((s) => s.startsWith('CREATE USER IF NOT EXISTS `fw_auditor`'))).toMatch(
      /IDENTIFIED WITH sha256_hash BY '[0-9a-f]{64}' SETTINGS readonly = 2$/,
    );
  });

  it('gives two pipelines sharing one writer different roles', () => {
    const a = pipelineRoles({ namespace: 'team-a', name: 'fw' });
    const b = pipelineRoles({ namespace: 'team-b', name: 'fw' });
    expect(a.writer).not.toBe(b.writer);
    expect(a.writer).toMatch(/^[A-Za-z_][A-Za-z0-9_]{0,62}$/);
    const long = pipelineRoles({ namespace: 'n'.repeat(63), name: 'p'.repeat(253) });
    expect(long.auditor.length).toBeLessThanOrEqual(63);
  });

  it('covers the storage tables and ON CLUSTER in cluster mode', () => {
    const sql = buildAccessStatements(resolved({ cluster: 'main' }), users);
    expect(sql[0]).toMatch(/^CREATE ROLE IF NOT EXISTS `lp_\w+` ON CLUSTER 'main'$/);
    expect(sql[1]).toContain("GRANT ON CLUSTER 'main' INSERT ON `logs`.`fw`, INSERT ON `logs`.`fw_local`");
    expect(sql[2]).toContain("CREATE USER IF NOT EXISTS `fw_writer` ON CLUSTER 'main' IDENTIFIED");
  });

  it('rejects bad names, shared users and short passwords', () => {
    expect(() =>
      buildAccessStatements(resolved(), { ...users, writer: { username: 'a b', password: 'x'.repeat(20) } }),
    ).toThrow();
    expect(() => buildAccessStatements(resolved(), { ...users, auditor: users.writer })).toThrow(/different/);
    expect(() =>
      buildAccessStatements(resolved(), { ...users, writer: { username: 'w', password: 'short' } }),
    ).toThrow(/16/);
  });
});

describe('AccessApplier', () => {
  it('sends nothing when nothing changed, everything after a rotation or the refresh period', async () => {
    let now = 0;
    const access = new AccessApplier(600_000, () => now);
    const { client, sent } = recordingClient();
    const spec = resolved();
    const grantsBefore = clickhouseStatementCounts().get('GRANT') ?? 0;
    expect(await access.ensure(client, spec, users)).toBe(true);
    const first = sent.length;
    expect(first).toBe(buildAccessStatements(spec, users).length);
    expect(clickhouseStatementCounts().get('GRANT')).toBe(grantsBefore + 4);
    for (let i = 0; i < 5; i++) expect(await access.ensure(client, spec, users)).toBe(false);
    expect(sent.length).toBe(first);
    const rotated = { ...users, writer: { ...users.writer, password: 'n'.repeat(20) } };
    expect(await access.ensure(client, spec, rotated)).toBe(true);
    expect(sent.length).toBe(2 * first);
    now += 600_001;
    expect(await access.ensure(client, spec, rotated)).toBe(true);
  });

  it('retries a failed apply after the failure delay, not on every reconcile', async () => {
    let now = 0;
    const access = new AccessApplier(600_000, () => now, 60_000);
    let fail = true;
    const client = {
      command: async () => {
        if (fail) throw new Error('boom');
      },
    } as unknown as ClickHouseClient;
    await expect(access.ensure(client, resolved(), users)).rejects.toThrow(/boom/);
    fail = false;
    expect(await access.ensure(client, resolved(), users)).toBe(false);
    now += 60_000;
    expect(await access.ensure(client, resolved(), users)).toBe(true);
  });
});

describe('role cleanup', () => {
  it('drops both pipeline roles (ON CLUSTER in cluster mode) and tolerates servers without access management', async () => {
    const spec = resolved({ cluster: 'main' });
    const roles = pipelineRoles(spec);
    expect(buildDropRolesStatement(spec)).toBe(
      `DROP ROLE IF EXISTS \`${roles.writer}\`, \`${roles.auditor}\` ON CLUSTER 'main'`,
    );
    const denied = {
      command: async () => {
        throw new Error('Code: 497. DB::Exception: Not enough privileges (ACCESS_DENIED)');
      },
    } as unknown as ClickHouseClient;
    expect(await new AccessApplier().dropRoles(denied, spec)).toBe(false);
    const broken = {
      command: async () => {
        throw new Error('connect ECONNREFUSED');
      },
    } as unknown as ClickHouseClient;
    await expect(new AccessApplier().dropRoles(broken, spec)).rejects.toThrow(/ECONNREFUSED/);
    const { client, sent } = recordingClient();
    expect(await new AccessApplier().dropRoles(client, spec)).toBe(true);
    expect(sent).toEqual([buildDropRolesStatement(spec)]);
  });
});
