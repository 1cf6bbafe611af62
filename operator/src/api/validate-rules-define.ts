/**
 * The shape of a LogPipeline cross-field rule (validate-rules.ts lists them all): the CEL the
 * apiserver runs plus its TypeScript mirror, and `define`, which fills in what a rule need not say.
 */
import type { CelRule } from './schema-dsl';

/** A cross-field rule: CEL for admission plus its offline mirror. */
export interface PipelineRule extends CelRule {
  /** Stable identifier, used in tests and error reports. */
  id: string;
  /** Schema node that carries the rule: dotted path from the object root, `[]` steps into list items. */
  at: string;
  /** True when the rule compares with the stored object (CEL `oldSelf`); such rules run on update only. */
  transition: boolean;
  /** Offline mirror of `rule`: true when the value is acceptable. */
  holds(self: unknown, oldSelf: unknown): boolean;
  /** Offline mirror of `message`/`messageExpression` for a value that broke the rule. */
  explain(self: unknown, oldSelf: unknown): string;
}

/** What a rule's author writes: the rule with its mirror typed by the node it is attached to. */
export interface RuleDef<T> extends CelRule {
  id: string;
  at: string;
  holds(self: T, oldSelf: T): boolean;
  explain?(self: T, oldSelf: T): string;
}

/** A rule from its definition: `transition` read from the CEL, a default explanation from its message. */
export function define<T>(def: RuleDef<T>): PipelineRule {
  const explain = def.explain ?? (() => def.message ?? `failed rule: ${def.rule}`);
  return {
    ...def,
    transition: /\boldSelf\b/.test(def.rule),
    holds: def.holds as PipelineRule['holds'],
    explain: explain as PipelineRule['explain'],
  };
}
