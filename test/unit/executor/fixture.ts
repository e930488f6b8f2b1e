// A small index with one field of every type and hand-checked data, shared by the table tests.
//   s (set):    10 → {1, 2, 1048576}   11 → {2}   12 → {3}
//   m (mutex):  1 → {1}   2 → {2}
//   b (bool):   true → {1}   false → {2, 3}
//   t (time YMDH): 1 → {1 @2017-01-02T03:04, 2 @2018-05-06T07:08, 4 (no time)}   2 → {3 @2017-01-02T04:00}
//   n (int, −1000…1000): 1:−5  2:0  3:7  4:1000  5:−1000
// Every column above is in `_exists`.
import { MemorySink, run } from './harness.js';

export function fixture(): MemorySink {
  const s = new MemorySink()
    .createIndex('i')
    .createField('i', 's')
    .createField('i', 'm', 'mutex')
    .createField('i', 'b', 'bool')
    .createField('i', 't', 'time', { timeQuantum: 'YMDH' })
    .createField('i', 'n', 'int', { min: -1000n, max: 1000n });
  run(
    s,
    'i',
    `Set(1, s=10) Set(2, s=10) Set(2, s=11) Set(1048576, s=10) Set(3, s=12)
     Set(1, m=1) Set(2, m=1) Set(2, m=2)
     Set(1, b=true) Set(2, b=false) Set(3, b=true) Set(3, b=false)
     Set(1, t=1, 2017-01-02T03:04) Set(2, t=1, 2018-05-06T07:08) Set(3, t=2, 2017-01-02T04:00) Set(4, t=1)
     Set(1, n=-5) Set(2, n=0) Set(3, n=7) Set(4, n=1000) Set(5, n=-1000)`,
  );
  return s;
}

/** An index with string keys on columns and on field `kf`, plus an unkeyed field `u`. */
export function keyedFixture(): MemorySink {
  const s = new MemorySink()
    .createIndex('k', { keys: true })
    .createField('k', 'kf', 'set', { keys: true })
    .createField('k', 'u');
  run(s, 'k', 'Set("a", kf="x") Set("b", kf="x") Set("a", kf="y") Set("c", u=3)');
  return s;
}
