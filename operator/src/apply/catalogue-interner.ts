/**
 * One copy of what a catalogue round reads many times over: a fleet's tables share a handful of
 * schemas (engine text, sorting and partition keys, column lists), yet every row arrives as fresh
 * strings and objects. Interning them keeps one copy per distinct value per round; a new round
 * starts a new interner, so text of dropped tables is not kept. Entries are frozen: shared by
 * many tables, they must never be changed through one of them.
 */
import type { CatalogueTable } from './catalogue-snapshot';

type Column = { name: string; type: string };

/** Canonical copies of repeated catalogue values for one round. */
export class CatalogueInterner {
  private readonly strings = new Map<string, string>();
  private readonly columnLists = new Map<string, readonly Column[]>();
  private readonly indexLists = new Map<string, readonly string[]>();

  /** The canonical copy of `s`. */
  text(s: string): string {
    if (typeof s !== 'string') return s;
    const known = this.strings.get(s);
    if (known !== undefined) return known;
    this.strings.set(s, s);
    return s;
  }

  /** `table` with its shared text and lists replaced by their canonical copies (the comment stays its own). */
  table(t: CatalogueTable): CatalogueTable {
    return {
      engine: this.text(t.engine),
      engineFull: this.text(t.engineFull),
      sortingKey: this.text(t.sortingKey),
      partitionKey: this.text(t.partitionKey),
      storagePolicy: this.text(t.storagePolicy),
      comment: t.comment,
      columns: this.columns(t.columns),
      skipIndexes: this.indexes(t.skipIndexes),
    };
  }

  private columns(list: Column[]): Column[] {
    const key = list.map((c) => `${c.name}\u0000${c.type}`).join('\u0001');
    let known = this.columnLists.get(key);
    if (!known) {
      known = Object.freeze(
        list.map((c) => Object.freeze({ name: this.text(c.name), type: this.text(c.type) })),
      );
      this.columnLists.set(key, known);
    }
    return known as Column[];
  }

  private indexes(list: string[]): string[] {
    const key = list.join('\u0001');
    let known = this.indexLists.get(key);
    if (!known) {
      known = Object.freeze(list.map((n) => this.text(n)));
      this.indexLists.set(key, known);
    }
    return known as string[];
  }
}
