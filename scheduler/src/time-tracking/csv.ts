import { pipeline, Readable } from 'node:stream';
import { stringify } from 'csv-stringify';

/**
 * A number written with a fixed number of places (`6.25`, `-0,25`): kept as the text
 * given, never neutralised as a formula, so a negative one stays a number to a spreadsheet.
 */
export class FixedNumber {
  constructor(readonly text: string) {}
}

/** A cell: text, a number (written as digits, never neutralised), a fixed-point number, or empty. */
export type Cell = string | number | FixedNumber | null;

/** Between the cells of a record: comma (RFC 4180), semicolon or tab. */
export type Delimiter = ',' | ';' | '\t';

/**
 * Records as an RFC 4180 file, streamed as they come (the records may be read from the
 * database batch by batch while the client downloads): CRLF line ends, fields quoted when
 * they hold the delimiter, a quote, line feed or carriage return, UTF-8 with a byte-order
 * mark so Excel reads it as UTF-8 rather than the local code page. Text cells a
 * spreadsheet would run as a formula (starting with = + - @, a tab or a carriage return,
 * or their full-width forms) get a leading `'` (OWASP's CSV injection advice,
 * csv-stringify's `escape_formulas`); numbers are left as numbers, so negative overtime
 * stays -15 and sums. The delimiter is a comma unless told.
 */
export function csvStream(
  records: AsyncIterable<Cell[]> | Iterable<Cell[]>,
  delimiter: Delimiter = ',',
): Readable {
  const file = stringify({
    bom: true,
    delimiter,
    record_delimiter: 'windows',
    // Given a record delimiter, csv-stringify would quote only fields holding CRLF; a lone
    // line feed or carriage return must be quoted too (RFC 4180), or readers split the row.
    quote_record_delimiter: true,
    escape_formulas: true,
    cast: {
      // A fixed-point number is written as its text, with the formula escape off for it
      // alone (csv-stringify takes a value with options from a cast).
      // (`escape_formulas` is an option its types leave out of a cast's answer.)
      object: (value) =>
        value instanceof FixedNumber
          ? Object.assign({ value: value.text }, { escape_formulas: false })
          : JSON.stringify(value),
    },
  });
  // An error reading the records destroys the file stream; the server then cuts the
  // response short (the client sees an incomplete transfer, never a complete-looking file).
  pipeline(Readable.from(records), file, () => {});
  return file;
}
