import { changeEvents, describeStatement } from './change-events';

describe('change Events (one per part and reconcile)', () => {
  it('shortens CREATE statements to what they created and keeps others', () => {
    expect(describeStatement('CREATE DATABASE IF NOT EXISTS `logs`')).toBe('created database `logs`');
    expect(
      describeStatement('CREATE TABLE IF NOT EXISTS `logs`.`fw` ( `ts` DateTime64(3) ) ENGINE = MergeTree'),
    ).toBe('created table `logs`.`fw`');
    expect(describeStatement('create materialized view `a`.`b` TO x AS SELECT 1')).toBe(
      'created materialized view `a`.`b`',
    );
    expect(describeStatement('ALTER TABLE `logs`.`fw`\n  MODIFY TTL ts + INTERVAL 2 YEAR')).toBe(
      'ALTER TABLE `logs`.`fw` MODIFY TTL ts + INTERVAL 2 YEAR',
    );
    expect(describeStatement(`ALTER TABLE t ${'x'.repeat(1000)}`)).toHaveLength(300);
  });

  it('joins every change into one Event, none when nothing changed', () => {
    expect(changeEvents('TableChanged', [])).toEqual([]);
    expect(changeEvents('TableChanged', ['created database `l`', 'created table `l`.`fw`'])).toEqual([
      { type: 'Normal', reason: 'TableChanged', message: 'created database `l`; created table `l`.`fw`' },
    ]);
  });
});
