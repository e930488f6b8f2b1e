// The one error type the PQL parser throws. It carries the failing offset and its line/column so
// the HTTP layer can render `parsing: <message>` while tests and tools can point at the spot.

export class PqlParseError extends Error {
  override name = 'PqlParseError';

  constructor(
    message: string,
    /** 0-based offset (UTF-16 code units) into the query text. */
    readonly pos: number,
    /** 1-based; lines are separated by '\n' (a CRLF's '\r' ends the previous line's columns). */
    readonly line: number,
    /** 1-based, in UTF-16 code units like `pos`. */
    readonly column: number,
  ) {
    super(message);
  }

  /** A syntax error: the message names the position, e.g. `parse error at line 1, column 9: …`. */
  static syntax(text: string, pos: number, detail: string): PqlParseError {
    const { line, column } = lineColumn(text, pos);
    return new PqlParseError(`parse error at line ${line}, column ${column}: ${detail}`, pos, line, column);
  }

  /**
   * An error whose message is Pilosa's exact text (e.g. `duplicate argument provided: f`), so
   * `parsing: …` bodies match the server we emulate; the position is still on the object.
   */
  static pilosa(text: string, pos: number, message: string): PqlParseError {
    const { line, column } = lineColumn(text, pos);
    return new PqlParseError(message, pos, line, column);
  }
}

export function lineColumn(text: string, pos: number): { line: number; column: number } {
  const at = Math.max(0, Math.min(pos, text.length));
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i >= 0 && i < at; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, column: at - lineStart + 1 };
}
