import { ClickHouseError } from '@clickhouse/client';
import { resolved } from '../../../test/fixtures/clickhouse-testing';
import { pipelineTableNames } from './clickhouse';
import { toClickHouseApplyError } from './clickhouse-client';
import { checkServerVersion } from './clickhouse-observe';

describe('toClickHouseApplyError', () => {
  it('classifies server, auth and transport failures and keeps the server message', () => {
    const server = toClickHouseApplyError(
      new ClickHouseError({ message: 'Table x does not exist', code: '60', type: 'UNKNOWN_TABLE' }),
      'reading x',
    );
    expect(server).toMatchObject({
      reason: 'ClickHouseError',
      code: '60',
      message: 'reading x: ClickHouse error 60: Table x does not exist',
    });
    const auth = toClickHouseApplyError(
      new ClickHouseError({ message: 'Authentication failed', code: '516', type: 'AUTHENTICATION_FAILED' }),
      'x',
    );
    expect(auth.reason).toBe('ClickHouseAuthFailed');
    expect(toClickHouseApplyError(new Error('connect ECONNREFUSED 127.0.0.1:8123'), 'x')).toMatchObject({
      reason: 'ClickHouseUnreachable',
      message: 'x: connect ECONNREFUSED 127.0.0.1:8123',
    });
  });
});

describe('checkServerVersion', () => {
  it.each([
    ['22.3.1.1', undefined],
    ['24.8.4.13', undefined],
    ['26.7.2.1', undefined],
    ['22.2.9.1', 'UnsupportedServerVersion'],
    ['21.12.1', 'UnsupportedServerVersion'],
    ['garbage', 'UnsupportedServerVersion'],
  ])('%s → %s', (version, reason) => {
    expect(checkServerVersion(version)?.reason).toBe(reason);
  });
});

describe('pipelineTableNames', () => {
  it('lists every table a pipeline may own, Distributed fronts before local tables', () => {
    expect(pipelineTableNames(resolved())).toEqual([
      'fw',
      'fw_dlq',
      'fw_integrity',
      'fw_checkpoints',
      'fw_seals',
      'fw_parser_stats',
    ]);
    expect(pipelineTableNames(resolved({ cluster: 'c' }))).toEqual([
      'fw', 'fw_dlq', 'fw_integrity', 'fw_checkpoints', 'fw_seals', 'fw_parser_stats',
      'fw_local', 'fw_dlq_local', 'fw_integrity_local', 'fw_checkpoints_local', 'fw_seals_local', 'fw_parser_stats_local',
    ]); // prettier-ignore
  });
});
