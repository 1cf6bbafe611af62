/**
 * One Event per part and reconcile for what the part changed (issue 18): a new pipeline's table
 * part runs CREATE DATABASE and two CREATE TABLE, and its topic part creates one or two topics;
 * as one Event each, a storm of 1000 new pipelines writes 2000 Events instead of 5000, and a
 * reader sees one line per part saying everything that was done.
 */
import type { PipelineEvent } from '../../apply/kube';

/** Longest piece kept of a statement that is not a CREATE (its start names what it changes). */
const MAX_STATEMENT = 300;

const CREATE =
  /^\s*CREATE\s+(TABLE|DATABASE|(?:MATERIALIZED\s+)?VIEW|DICTIONARY)\s+(?:IF\s+NOT\s+EXISTS\s+)?(\S+)/i;

/**
 * A DDL statement as a short phrase: a CREATE becomes "created table `db`.`t`" (the full
 * definition is the spec's, rendered in the table itself), anything else its first line, cut.
 */
export function describeStatement(sql: string): string {
  const m = CREATE.exec(sql);
  if (m) return `created ${m[1].replace(/\s+/g, ' ').toLowerCase()} ${m[2]}`;
  return sql.replace(/\s*\n\s*/g, ' ').slice(0, MAX_STATEMENT);
}

/** One Normal Event `reason` listing `changes` ("; "-joined), or none when nothing changed. */
export function changeEvents(reason: string, changes: readonly string[]): PipelineEvent[] {
  if (changes.length === 0) return [];
  return [{ type: 'Normal', reason, message: changes.join('; ') }];
}

/** Reason of the one Event of a reconcile in which both the topic and the table part changed something. */
export const TOPIC_AND_TABLE_CHANGED = 'TopicAndTableChanged';

/**
 * The parts' Events of one reconcile, with the topic's and the table's change Events folded into
 * one `TopicAndTableChanged` when both changed something (a new pipeline: one Event fewer per
 * pipeline in a creation storm); every other Event is kept as it is.
 */
export function foldChangeEvents(
  topic: readonly PipelineEvent[] = [],
  table: readonly PipelineEvent[] = [],
): PipelineEvent[] {
  const isChange = (reason: string) => (e: PipelineEvent) => e.type === 'Normal' && e.reason === reason;
  const t = topic.find(isChange('TopicChanged'));
  const d = table.find(isChange('TableChanged'));
  if (!t || !d) return [...topic, ...table];
  const folded: PipelineEvent = {
    type: 'Normal',
    reason: TOPIC_AND_TABLE_CHANGED,
    message: `${t.message}; ${d.message}`,
  };
  return [folded, ...topic.filter((e) => e !== t), ...table.filter((e) => e !== d)];
}
