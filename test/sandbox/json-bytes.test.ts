import { describe, expect, test } from 'vitest';
import { JsonBytes } from '../../src/sandbox/json/json-bytes.js';
import { JsonList } from '../../src/sandbox/json/written-json.js';
import { createRng } from '../../src/sandbox/prng.js';

const written = (write: (out: JsonBytes) => void) => {
  const out = new JsonBytes(Buffer.alloc(4));
  write(out);
  return out.bytes().toString('utf8');
};

describe('numbers written digit by digit', () => {
  const rng = createRng(1, 'json-bytes');
  const samples = [0, 1, 9, 10, 99, 100, 101, 109, 110, 1999, 2_147_483_647, 2 ** 46 - 1];
  for (let k = 0; k < 20_000; k++) samples.push(rng.int(0, 2_000_000), rng.int(0, 2 ** 31 - 1));
  const all = [...samples, ...samples.map((n) => -n)];

  test('whole numbers are what JSON.stringify writes, negative ones and zero included', () => {
    const wrong = all.filter((n) => written((o) => o.int(n)) !== JSON.stringify(n));
    expect(wrong.slice(0, 5)).toEqual([]);
  });

  test('minor units are the decimal amount JSON.stringify writes for minor / 100', () => {
    const wrong = all.filter((n) => written((o) => o.cents(n)) !== JSON.stringify(n / 100));
    expect(wrong.slice(0, 5)).toEqual([]);
  });

  test('the buffer grows past its first size and keeps what was written', () => {
    const text = written((o) => {
      for (let k = 0; k < 1000; k++) {
        o.raw(Buffer.from('é,'));
        o.int(k);
        o.char(0x3b);
      }
    });
    expect(text).toBe(Array.from({ length: 1000 }, (_, k) => `é,${k};`).join(''));
  });
});

describe('a listing written to bytes', () => {
  const list = () => JsonList.write((out) => out.text('[{"é":1},2]'));
  const text = (json: string | Uint8Array) => (typeof json === 'string' ? json : Buffer.from(json).toString('utf8'));

  test('is wrapped in place when the head fits in front of it, and as text when it does not or is not ASCII', () => {
    const inPlace = list().wrap('{"data":', '}');
    expect(inPlace.buffer).toBeDefined();
    expect(text(inPlace.json)).toBe('{"data":[{"é":1},2]}');
    const long = `{"x":"${'a'.repeat(400)}","data":`;
    expect(list().wrap(long, '}').json).toBe(`${long}[{"é":1},2]}`);
    expect(list().wrap('{"ü":', '}').json).toBe('{"ü":[{"é":1},2]}');
  });

  test('gives back records that stringify to the same text', () => {
    expect(JSON.stringify(list().values())).toBe('[{"é":1},2]');
  });
});
