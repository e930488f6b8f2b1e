// The cursor the hand-written payload decoders share (bits-decode.ts, values-decode.ts): one
// instance per decoder, reset per record, so nothing (no closure, no DataView) is allocated per
// record on replay.
import { AssertionError } from '../util/assert.js';

export class PayloadReader {
  buf: Buffer = Buffer.alloc(0);
  pos = 0;

  /** `what` names the message in errors. */
  constructor(private readonly what: string) {}

  reset(payload: Uint8Array): void {
    this.buf = Buffer.isBuffer(payload) ? payload : Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
    this.pos = 0;
  }

  get done(): boolean {
    return this.pos >= this.buf.length;
  }

  /** An unsigned varint below 2^53 (exact as a number). */
  varint(): number {
    let result = 0;
    let shift = 1;
    for (;;) {
      if (this.pos >= this.buf.length) throw new AssertionError(`${this.what} payload truncated in a varint`);
      const byte = this.buf[this.pos++];
      result += (byte & 0x7f) * shift;
      if (byte < 0x80) return result;
      shift *= 128;
    }
  }

  /** Steps over a field the decoder does not take, by its wire type. */
  skip(wire: number): void {
    if (wire === 0) this.varint();
    else if (wire === 2) this.pos = this.fieldEnd();
    else if (wire === 1 || wire === 5) {
      const end = this.pos + (wire === 1 ? 8 : 4);
      if (end > this.buf.length) throw new AssertionError(`${this.what} payload truncated in a fixed-size field`);
      this.pos = end;
    } else throw new AssertionError(`${this.what} payload has unsupported wire type ${wire}`);
  }

  /** The end of a length-delimited field whose length varint is next. */
  fieldEnd(): number {
    const len = this.varint();
    const end = this.pos + len;
    if (end > this.buf.length) throw new AssertionError(`${this.what} payload truncated in a field`);
    return end;
  }
}
