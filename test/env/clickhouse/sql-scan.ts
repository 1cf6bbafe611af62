/**
 * Just enough of ClickHouse's lexer to do what the HTTP server must do before the engine sees a
 * request: find where an INSERT's inline data starts (so the data can be streamed instead of
 * parsed as SQL), find a query's own FORMAT clause (for X-ClickHouse-Format), and refuse
 * multi-statements like the real HTTP interface. Works on a latin1 view of the request bytes so
 * string indexes are byte offsets.
 */

/** What the server needs to know about the statement at the start of a request. */
export interface StatementScan {
  /** First keyword, upper-cased ('' when the text has no tokens yet). */
  keyword: string;
  /** False while more input could still change the answer. */
  complete: boolean;
  /** INSERT with inline data: the header ends at `headerEnd`, the data starts at `dataStart`. */
  insert?: { format: string; headerEnd: number; dataStart: number };
  /** A non-INSERT statement's trailing `FORMAT name`. */
  outputFormat?: string;
  /** A second statement follows the first `;`. */
  multiStatement: boolean;
}

interface Token {
  kind: 'word' | 'quoted' | 'punct' | 'number';
  text: string;
  start: number;
  end: number;
}

const WORD_START = /[A-Za-z_\x80-\xff]/;
const WORD_CHAR = /[A-Za-z0-9_$\x80-\xff]/;

/** Lexes one token from `pos` (skipping whitespace and comments); null at the end of input. */
function nextToken(text: string, from: number): Token | null {
  let pos = skipTrivia(text, from);
  if (pos >= text.length) return null;
  const start = pos;
  const ch = text[pos];
  if (ch === "'" || ch === '"' || ch === '`') {
    pos = skipQuoted(text, pos, ch);
    return { kind: 'quoted', text: text.slice(start, pos), start, end: pos };
  }
  if (WORD_START.test(ch)) {
    while (pos < text.length && WORD_CHAR.test(text[pos])) pos++;
    return { kind: 'word', text: text.slice(start, pos), start, end: pos };
  }
  if (/[0-9]/.test(ch)) {
    while (pos < text.length && /[0-9A-Za-z_.]/.test(text[pos])) pos++;
    return { kind: 'number', text: text.slice(start, pos), start, end: pos };
  }
  return { kind: 'punct', text: ch, start, end: pos + 1 };
}

function skipTrivia(text: string, pos: number): number {
  for (;;) {
    while (pos < text.length && /\s/.test(text[pos])) pos++;
    if (text.startsWith('--', pos) || text[pos] === '#') {
      const eol = text.indexOf('\n', pos);
      pos = eol < 0 ? text.length : eol + 1;
    } else if (text.startsWith('/*', pos)) {
      pos = skipBlockComment(text, pos);
    } else {
      return pos;
    }
  }
}

function skipBlockComment(text: string, pos: number): number {
  let depth = 0;
  while (pos < text.length) {
    if (text.startsWith('/*', pos)) {
      depth++;
      pos += 2;
    } else if (text.startsWith('*/', pos)) {
      pos += 2;
      if (--depth === 0) return pos;
    } else {
      pos++;
    }
  }
  return pos;
}

function skipQuoted(text: string, pos: number, quote: string): number {
  pos++;
  while (pos < text.length) {
    const ch = text[pos];
    if (ch === '\\') pos += 2;
    else if (ch === quote && text[pos + 1] === quote) pos += 2;
    else if (ch === quote) return pos + 1;
    else pos++;
  }
  return text.length + 1; // unterminated: marks the token as running past the input
}

/**
 * Where INSERT data begins after `FORMAT name`: ClickHouse skips spaces and tabs, then at most
 * one line break, so a TSV body keeps its leading whitespace on the next line.
 */
function dataStartAfter(text: string, pos: number): number {
  while (pos < text.length && (text[pos] === ' ' || text[pos] === '\t')) pos++;
  if (text[pos] === '\r') pos++;
  if (text[pos] === '\n') pos++;
  return pos;
}

/** Scans the statement at the start of `text`; `atEnd` says no more input will follow. */
export function scanStatement(text: string, atEnd: boolean): StatementScan {
  const first = nextToken(text, 0);
  if (!first || !settled(first, text, atEnd)) return { keyword: '', complete: atEnd, multiStatement: false };
  const keyword = first.kind === 'word' ? first.text.toUpperCase() : '';
  if (keyword === 'INSERT') return scanInsert(text, first, atEnd);
  return scanQuery(text, 0, keyword, atEnd);
}

/** A token is settled when input follows it (a word or literal cut by the buffer end is not). */
function settled(tok: Token, text: string, atEnd: boolean): boolean {
  return tok.end < text.length || (atEnd && tok.end <= text.length);
}

function scanInsert(text: string, first: Token, atEnd: boolean): StatementScan {
  let depth = 0;
  for (let tok = nextToken(text, first.end); tok; tok = nextToken(text, tok.end)) {
    if (!settled(tok, text, atEnd)) break;
    if (tok.kind === 'punct') {
      depth += tok.text === '(' ? 1 : tok.text === ')' ? -1 : 0;
      if (tok.text === ';' && depth === 0) return finishQuery(text, 'INSERT', tok.end, atEnd, undefined);
      continue;
    }
    if (tok.kind !== 'word' || depth !== 0) continue;
    const word = tok.text.toUpperCase();
    if (word === 'VALUES') {
      return {
        keyword: 'INSERT',
        complete: true,
        insert: { format: 'Values', headerEnd: tok.end, dataStart: tok.end },
        multiStatement: false,
      };
    }
    if (word === 'SELECT' || word === 'WITH') return scanQuery(text, tok.start, 'INSERT', atEnd);
    if (word === 'FORMAT') {
      const name = nextToken(text, tok.end);
      if (!name || !settled(name, text, atEnd)) break;
      const dataStart = dataStartAfter(text, name.end);
      const sawLineBreak = text.lastIndexOf('\n', dataStart - 1) >= name.end;
      const complete = atEnd || sawLineBreak || dataStart < text.length;
      if (!complete) break;
      return {
        keyword: 'INSERT',
        complete,
        insert: { format: name.text, headerEnd: name.end, dataStart },
        multiStatement: false,
      };
    }
  }
  return { keyword: 'INSERT', complete: atEnd, multiStatement: false };
}

/** A statement without inline data: find its FORMAT clause and anything after its `;`. */
function scanQuery(text: string, from: number, keyword: string, atEnd: boolean): StatementScan {
  let depth = 0;
  let outputFormat: string | undefined;
  let prev: Token | undefined;
  for (let tok = nextToken(text, from); tok; tok = nextToken(text, tok.end)) {
    if (tok.kind === 'punct' && tok.text === ';' && depth === 0)
      return finishQuery(text, keyword, tok.end, atEnd, outputFormat);
    if (tok.kind === 'punct') depth += tok.text === '(' ? 1 : tok.text === ')' ? -1 : 0;
    if (depth === 0 && tok.kind === 'word' && prev?.kind === 'word' && prev.text.toUpperCase() === 'FORMAT') {
      const after = nextToken(text, tok.end);
      const atClauseEnd = !after || after.text === ';' || after.text.toUpperCase() === 'SETTINGS';
      if (atClauseEnd) outputFormat = tok.text;
    }
    prev = tok;
  }
  return { keyword, complete: atEnd, outputFormat, multiStatement: false };
}

function finishQuery(
  text: string,
  keyword: string,
  afterSemicolon: number,
  atEnd: boolean,
  outputFormat?: string,
): StatementScan {
  let rest = nextToken(text, afterSemicolon);
  while (rest && rest.text === ';') rest = nextToken(text, rest.end);
  return { keyword, complete: atEnd, outputFormat, multiStatement: rest !== null };
}

/** Statements the engine can stream chunk by chunk (everything else is executed in one call). */
export function isStreamable(keyword: string): boolean {
  return keyword === 'SELECT' || keyword === 'WITH';
}

/** True when an INSERT header sets its own dedup token (it must then go to the engine in one piece). */
export function headerSetsDedupToken(header: string): boolean {
  return /\binsert_deduplication_token\b/i.test(header);
}
