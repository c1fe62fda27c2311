/** A small RFC 4180 reader: quoted fields, doubled quotes, commas and line breaks inside quotes, CRLF. */

export interface CsvRecord {
  /** 1-based line of the file the record starts on. */
  line: number;
  fields: string[];
}

export function parseCsv(text: string): CsvRecord[] {
  const records: CsvRecord[] = [];
  let fields: string[] = [];
  let field = '';
  let quoted = false;
  let line = 1;
  let start = 1;
  let any = false;
  const src = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text; // a spreadsheet's byte-order mark
  const endRecord = () => {
    fields.push(field);
    if (any || fields.length > 1 || field !== '') records.push({ line: start, fields });
    fields = [];
    field = '';
    any = false;
  };
  for (let i = 0; i < src.length; i++) {
    const c = src[i];
    if (quoted) {
      if (c === '"' && src[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else {
        if (c === '\n') line++;
        field += c;
      }
      continue;
    }
    if (c === '"' && field === '') {
      quoted = true;
      any = true;
    } else if (c === ',') {
      fields.push(field);
      field = '';
      any = true;
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && src[i + 1] === '\n') i++;
      endRecord();
      line++;
      start = line;
    } else field += c;
  }
  if (quoted) throw new Error(`a quoted field opened on line ${start} is never closed`);
  endRecord();
  return records;
}
