import { clickhouseRequestKind, kubeVerbResource } from './request-counts';

describe('kubeVerbResource', () => {
  it('names verbs and resources as the audit log does', () => {
    expect(kubeVerbResource('GET', '/api/v1/namespaces/a/secrets/ch')).toEqual({
      verb: 'get',
      resource: 'secrets',
    });
    expect(kubeVerbResource('GET', '/apis/apps/v1/namespaces/a/deployments')).toEqual({
      verb: 'list',
      resource: 'deployments',
    });
    expect(kubeVerbResource('GET', '/api/v1/pods', { watch: true })).toEqual({
      verb: 'watch',
      resource: 'pods',
    });
    expect(
      kubeVerbResource('PATCH', '/apis/logpipeline.io/v1alpha1/namespaces/a/logpipelines/p/status'),
    ).toEqual({
      verb: 'patch',
      resource: 'logpipelines/status',
    });
    expect(kubeVerbResource('PATCH', '/apis/apps/v1/namespaces/a/deployments/w/scale').resource).toBe(
      'deployments/scale',
    );
    expect(kubeVerbResource('POST', '/api/v1/namespaces/a/events')).toEqual({
      verb: 'create',
      resource: 'events',
    });
    expect(kubeVerbResource('GET', '/api/v1/namespaces/a')).toEqual({ verb: 'get', resource: 'namespaces' });
  });
});

describe('clickhouseRequestKind', () => {
  it('labels system reads by table, pipeline tables as one label, DDL by statement kind', () => {
    expect(clickhouseRequestKind('SELECT name FROM system.columns WHERE database = {db:String}')).toBe(
      'SELECT system.columns',
    );
    expect(clickhouseRequestKind('SELECT sum(rows) FROM `db`.`t_parser_stats` WHERE 1')).toBe(
      'SELECT pipeline table',
    );
    expect(clickhouseRequestKind('SELECT version() AS v')).toBe('SELECT');
    expect(clickhouseRequestKind('CREATE TABLE IF NOT EXISTS a.b (x UInt8)')).toBe('CREATE TABLE');
    expect(clickhouseRequestKind('GRANT INSERT ON a.b TO r')).toBe('GRANT');
  });
});
