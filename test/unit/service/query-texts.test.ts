// Accepted query texts are kept parsed and frozen, short texts only, the oldest going first.
import { describe, expect, it } from 'vitest';
import { parse } from '../../../src/pql/index.js';
import { QueryTexts } from '../../../src/service/query-texts.js';

const accept = (text: string) => {
  const parsed = parse(text);
  return { parsed, legacy: false, calls: parsed.calls.map((c) => c.name) };
};

describe('QueryTexts', () => {
  it('keeps a parsed text frozen: a change throws instead of reaching the next request', () => {
    const texts = new QueryTexts();
    const text = 'Count(Intersect(Row(f=1), Row(f=[1,2])))';
    texts.keep(text, accept(text));
    const kept = texts.get(text);
    if (kept === undefined) throw new Error('the text was not kept');
    expect(kept.parsed).toEqual(parse(text));
    expect(kept.calls).toEqual(['Count']);
    const call = kept.parsed.calls[0];
    expect(() => {
      (call as { name: string }).name = 'Row';
    }).toThrow(TypeError);
    expect(() => (call.children as unknown[]).push(call)).toThrow(TypeError);
    expect(() => (kept.calls as string[]).push('Row')).toThrow(TypeError);
  });

  it('does not keep long texts, and forgets the oldest past its capacity', () => {
    const texts = new QueryTexts();
    const long = `Count(Union(${Array.from({ length: 300 }, (_, i) => `Row(f=${i})`).join(', ')}))`;
    texts.keep(long, accept(long));
    expect(texts.get(long)).toBeUndefined();
    for (let i = 0; i < 1025; i++) texts.keep(`Row(f=${i})`, accept(`Row(f=${i})`));
    expect(texts.get('Row(f=0)')).toBeUndefined();
    expect(texts.get('Row(f=1)')).toBeDefined();
    expect(texts.get('Row(f=1024)')).toBeDefined();
  });
});
