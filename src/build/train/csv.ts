/**
 * CSV as spreadsheets export it (RFC 4180): a header row, fields separated by a comma, semicolon
 * or tab (the header's most frequent), quoted fields holding separators, `""` and line breaks.
 * Each record keeps the line it starts on, so messages name the user's line. Runtime-neutral.
 */

export interface CsvRecords {
  records: Array<{ line: number; fields: string[] }>;
  /** Records that are not well-formed (text after a closing quote), by line. */
  errors: Array<{ line: number; message: string }>;
  /** The line of a quoted field never closed (the rest of the file is inside it), or null. */
  unclosedAt: number | null;
}

/** The header line's separator: the most frequent of , ; and tab outside quotes (ties: comma). */
export function separatorOf(header: string): string {
  let quoted = false;
  const counts = new Map<string, number>([
    [',', 0],
    [';', 0],
    ['\t', 0],
  ]);
  for (const ch of header) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && counts.has(ch)) counts.set(ch, (counts.get(ch) as number) + 1);
  }
  const [best, count] = [...counts].sort((a, b) => b[1] - a[1])[0] as [string, number];
  return count > 0 ? best : ',';
}

/** RFC 4180 records with the line each starts on; quoted fields may hold separators and newlines. */
export function csvRecords(text: string): CsvRecords {
  const errors: Array<{ line: number; message: string }> = [];
  const firstLine = text.split('\n', 1)[0] ?? '';
  const sep = separatorOf(firstLine.replace(/\r$/, ''));
  const records: Array<{ line: number; fields: string[] }> = [];
  let line = 1;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const start = line;
    const fields: string[] = [];
    let bad: string | null = null;
    for (;;) {
      let field = '';
      if (text[i] === '"') {
        i++;
        let closed = false;
        while (i < n) {
          const ch = text[i] as string;
          if (ch === '"') {
            if (text[i + 1] === '"') {
              field += '"';
              i += 2;
              continue;
            }
            i++;
            closed = true;
            break;
          }
          if (ch === '\n') line++;
          field += ch;
          i++;
        }
        // Unclosed, it runs to the end of the file: nothing after it can be read as rows.
        if (!closed) return { records, errors, unclosedAt: start };
        // After the closing quote: a separator, the end of the line, or the end of the file.
        let after = i;
        while (after < n && text[after] !== sep && text[after] !== '\n' && text[after] !== '\r') {
          after++;
        }
        if (after > i && bad === null) {
          bad = `text after a closing quote (a '"' inside a quoted text is written '""')`;
        }
        i = after;
      } else {
        while (i < n && text[i] !== sep && text[i] !== '\n') field += text[i++];
        if (field.endsWith('\r')) field = field.slice(0, -1);
      }
      fields.push(field);
      if (text[i] === sep) {
        i++;
        continue;
      }
      if (text[i] === '\r') i++;
      if (text[i] === '\n') {
        i++;
        line++;
      }
      break;
    }
    if (bad !== null) errors.push({ line: start, message: bad });
    else if (!(fields.length === 1 && fields[0]!.trim() === ''))
      records.push({ line: start, fields });
  }
  return { records, errors, unclosedAt: null };
}
