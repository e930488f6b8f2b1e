// The last index, field and view name decoded: consecutive records nearly always repeat them,
// and comparing a few bytes is cheaper than a utf8 decode (a native call) per name per record.
// Returning the same string object also lets callers compare names by identity first.
export class NameCache {
  private bytes = Buffer.alloc(64);
  private len = -1;
  private value = '';

  get(b: Buffer, start: number, end: number): string {
    const n = end - start;
    if (n === this.len) {
      let same = true;
      for (let i = 0; i < n && same; i++) same = b[start + i] === this.bytes[i];
      if (same) return this.value;
    }
    this.value = b.toString('utf8', start, end);
    if (n > this.bytes.length) this.bytes = Buffer.alloc(n);
    b.copy(this.bytes, 0, start, end);
    this.len = n;
    return this.value;
  }
}
