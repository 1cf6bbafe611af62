import { ReverseIndex } from './reverse-index';

describe('ReverseIndex', () => {
  it('answers each name once for the keys it references, and follows replacements and removals', () => {
    const index = new ReverseIndex();
    index.set('ns/a', ['s1', 's2']);
    index.set('ns/b', ['s2']);
    expect(index.namesFor(['s2']).sort()).toEqual(['ns/a', 'ns/b']);
    expect(index.namesFor(['s1', 's2']).sort()).toEqual(['ns/a', 'ns/b']);
    index.set('ns/a', ['s3']);
    expect(index.namesFor(['s1'])).toEqual([]);
    expect(index.namesFor(['s2'])).toEqual(['ns/b']);
    expect(index.namesFor(['s3'])).toEqual(['ns/a']);
    index.remove('ns/b');
    expect(index.namesFor(['s2'])).toEqual([]);
    index.remove('ns/unknown');
    expect(index.namesFor(['s3'])).toEqual(['ns/a']);
  });
});
