import { changeEvents, describeStatement, foldChangeEvents } from './change-events';

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

  it("folds the topic's and the table's change into one Event when both changed, keeps the rest", () => {
    const topic = {
      type: 'Normal' as const,
      reason: 'TopicChanged',
      message: 'topic t: created with 1 partitions',
    };
    const table = { type: 'Normal' as const, reason: 'TableChanged', message: 'created table `l`.`fw`' };
    const refused = { type: 'Warning' as const, reason: 'DestructiveChangeRefused', message: 'no' };
    expect(foldChangeEvents([topic], [table, refused])).toEqual([
      {
        type: 'Normal',
        reason: 'TopicAndTableChanged',
        message: 'topic t: created with 1 partitions; created table `l`.`fw`',
      },
      refused,
    ]);
    expect(foldChangeEvents([topic], [refused])).toEqual([topic, refused]);
    expect(foldChangeEvents(undefined, [table])).toEqual([table]);
  });
});
