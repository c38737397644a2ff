const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/** JSON's whitespace: space, tab, line feed, carriage return. */
function isSpace(c: number | undefined): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

function skipSpace(bytes: Buffer, from: number): number {
  let i = from;
  while (i < bytes.length && isSpace(bytes[i])) i++;
  return i;
}

/**
 * The items of the JSON array in `bytes`, parsed `perSlice` at a time. `JSON.parse` of a whole 12 MB file holds
 * the file as one string (two bytes a character when a single name is not Latin-1) beside every parsed item; cut
 * at the array's own commas, only one slice is alive at a time. Each slice goes through `JSON.parse`, so anything
 * it would refuse is refused here too (a SyntaxError), as is an empty item, a trailing comma, an unclosed array
 * and text after it.
 */
export function* jsonArrayItems(bytes: Buffer, perSlice = 500): Generator<unknown> {
  const open = skipSpace(bytes, 0);
  if (bytes[open] !== OPEN_BRACKET) throw new SyntaxError("JSON array expected: the text does not start with [");
  let depth = 0;
  let inString = false;
  let escaped = false;
  let sliceStart = open + 1;
  let items = 1;
  let commas = 0;
  let end = -1;
  for (let i = open; i < bytes.length; i++) {
    const c = bytes[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (c === BACKSLASH) escaped = true;
      else if (c === QUOTE) inString = false;
      continue;
    }
    if (c === QUOTE) inString = true;
    else if (c === OPEN_BRACKET || c === OPEN_BRACE) depth++;
    else if (c === CLOSE_BRACKET || c === CLOSE_BRACE) {
      depth--;
      if (depth === 0) {
        if (c !== CLOSE_BRACKET) throw new SyntaxError(`JSON array closed by } at byte ${i}`);
        // The one slice that may hold no item: the whole of an empty array.
        yield* parseSlice(bytes, sliceStart, i, commas === 0 ? [0, 1] : [items]);
        end = i + 1;
        break;
      }
    } else if (c === COMMA && depth === 1) {
      commas++;
      if (items < perSlice) items++;
      else {
        yield* parseSlice(bytes, sliceStart, i, [items]);
        sliceStart = i + 1;
        items = 1;
      }
    }
  }
  if (end < 0) throw new SyntaxError("JSON array not closed: the text ends inside it");
  if (skipSpace(bytes, end) !== bytes.length) throw new SyntaxError(`text after the JSON array, at byte ${end}`);
}

/** One slice's items; `expected` are the counts its commas allow (fewer means an empty item: `[1,,2]`, `[1,]`). */
function parseSlice(bytes: Buffer, start: number, end: number, expected: readonly number[]): unknown[] {
  const parsed: unknown = JSON.parse(`[${bytes.toString("utf8", start, end)}]`);
  if (!Array.isArray(parsed) || !expected.includes(parsed.length)) {
    throw new SyntaxError(`JSON array has an empty item between bytes ${start} and ${end}`);
  }
  return parsed;
}
