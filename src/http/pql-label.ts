// The metrics label of a query request: its first PQL call name, from a few bytes of the body
// (no parse). Unknown names become "other" so a client cannot grow the label set.
import { knownCallName } from '../pql/call-names.js';

export function firstPqlCall(body: unknown, contentType: string | undefined): string {
  if (!Buffer.isBuffer(body)) return 'none';
  if (contentType !== undefined && contentType.includes('protobuf')) return 'protobuf';
  let i = 0;
  while (i < body.length && (body[i] === 0x20 || body[i] === 0x0a || body[i] === 0x0d || body[i] === 0x09)) i++;
  let j = i;
  while (j < body.length && j - i < 32 && isNameByte(body[j])) j++;
  if (j === i) return 'none';
  const name = body.toString('latin1', i, j);
  return knownCallName(name) ?? 'other';
}

function isNameByte(b: number): boolean {
  return (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || (b >= 0x30 && b <= 0x39) || b === 0x5f;
}
