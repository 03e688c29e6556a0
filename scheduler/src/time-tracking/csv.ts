import { pipeline, Readable } from 'node:stream';
import { stringify } from 'csv-stringify';

/** A cell: text, a number (written as digits, never neutralised), or empty. */
export type Cell = string | number | null;

/**
 * Records as an RFC 4180 file, streamed as they come (the records may be read from the
 * database batch by batch while the client downloads): CRLF line ends, fields quoted when
 * they hold a comma, quote, line feed or carriage return, UTF-8 with a byte-order mark so Excel reads it
 * as UTF-8 rather than the local code page. Text cells a spreadsheet would run as a
 * formula (starting with = + - @, a tab or a carriage return, or their full-width forms)
 * get a leading `'` (OWASP's CSV injection advice, csv-stringify's `escape_formulas`);
 * numbers are left as numbers, so negative overtime stays -15 and sums.
 */
export function csvStream(records: AsyncIterable<Cell[]> | Iterable<Cell[]>): Readable {
  const file = stringify({
    bom: true,
    record_delimiter: 'windows',
    // Given a record delimiter, csv-stringify would quote only fields holding CRLF; a lone
    // line feed or carriage return must be quoted too (RFC 4180), or readers split the row.
    quote_record_delimiter: true,
    escape_formulas: true,
  });
  // An error reading the records destroys the file stream; the server then cuts the
  // response short (the client sees an incomplete transfer, never a complete-looking file).
  pipeline(Readable.from(records), file, () => {});
  return file;
}
