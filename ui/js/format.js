// Formatting for people: sizes, durations, tokens, cost, file types. Pure functions.

export function bytes(n) {
  if (n == null || Number.isNaN(n)) return '';
  if (n < 1024) return `${n} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return `${v >= 100 ? Math.round(v) : v.toFixed(1)} ${units[i]}`;
}

export function duration(ms) {
  if (ms == null || ms < 0) return '';
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  const rest = String(s % 60).padStart(2, '0');
  if (m < 60) return `${m}:${rest}`;
  return `${Math.floor(m / 60)}:${String(m % 60).padStart(2, '0')}:${rest}`;
}

export function tokens(n) {
  if (!n) return '0';
  if (n < 1000) return String(n);
  if (n < 1e6) return `${(n / 1000).toFixed(n < 1e4 ? 1 : 0)}k`;
  return `${(n / 1e6).toFixed(1)}M`;
}

export function cost(usd) {
  if (usd == null) return '';
  if (usd === 0) return '$0';
  if (usd < 0.01) return '<$0.01';
  return `$${usd.toFixed(2)}`;
}

export function count(n) {
  return n == null ? '' : n.toLocaleString('en-US');
}

const DECIMAL = /^\s*-?\d+\.(\d+)\s*$/;
const NUMBER = /^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/;

/// A table cell as an analyst reads it: a decimal with more than 4 digits after the
/// point rounded (2 decimals, or 3 significant digits below 1: `77.26994791666667`
/// reads `77.27`); anything else as it is. `num`: the cell is a number (aligned right).
/// The exact value stays on hover and in copies (vtable.js).
export function readableCell(v) {
  const s = v == null ? '' : String(v);
  const num = NUMBER.test(s);
  const m = DECIMAL.exec(s);
  if (!m || m[1].length <= 4) return { text: s, num, rounded: false };
  const n = Number(s);
  const a = Math.abs(n);
  const text = a >= 1 || a === 0 ? n.toFixed(2) : n.toPrecision(3);
  return { text, num, rounded: text !== s.trim() };
}

const TYPES = {
  csv: 'CSV table', tsv: 'TSV table', xlsx: 'Excel workbook', xlsm: 'Excel workbook', xls: 'Excel workbook',
  xlsb: 'Excel workbook', ods: 'OpenDocument sheet', json: 'JSON', jsonl: 'JSON Lines', ndjson: 'JSON Lines', parquet: 'Parquet', png: 'PNG image',
  jpg: 'JPEG image', jpeg: 'JPEG image', svg: 'SVG image', gif: 'GIF image', md: 'Markdown report',
  txt: 'Text', pdf: 'PDF', py: 'Python', zip: 'Zip archive', html: 'Interactive chart', htm: 'Interactive chart',
};

export function extension(name) {
  const i = name.lastIndexOf('.');
  return i > 0 ? name.slice(i + 1).toLowerCase() : '';
}

export function fileType(name) {
  return TYPES[extension(name)] || (extension(name) ? `${extension(name).toUpperCase()} file` : 'File');
}

/// Which viewer an output gets: image, chart (HTML, live in a sandboxed frame), table,
/// report, text or other.
export function viewOf(name) {
  const e = extension(name);
  if (['png', 'jpg', 'jpeg', 'gif', 'svg', 'webp'].includes(e)) return 'image';
  if (['html', 'htm'].includes(e)) return 'chart';
  if (['csv', 'tsv', 'xlsx', 'xlsm', 'xls', 'xlsb', 'ods', 'parquet', 'jsonl', 'ndjson'].includes(e)) return 'table';
  if (['md', 'markdown'].includes(e)) return 'report';
  if (['txt', 'json', 'log', 'py', 'xml', 'yaml', 'yml', 'sql'].includes(e)) return 'text';
  return 'other';
}

export function baseName(path) {
  const parts = String(path).split(/[\\/]/);
  return parts[parts.length - 1] || String(path);
}

/// "2026-12-01T10:03:00Z" -> "1 Dec, 10:03" (or "10:03" today).
export function when(iso, now = new Date()) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const hm = `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;
  if (d.toDateString() === now.toDateString()) return hm;
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  return `${d.getDate()} ${months[d.getMonth()]}, ${hm}`;
}

/// A stream's output is shown from its last SHOW_OUTPUT_CHARS characters (a cell that
/// prints megabytes would otherwise be laid out again on every chunk, and the window
/// would stop answering); "Show all" shows the rest of what the app received.
export const SHOW_OUTPUT_CHARS = 40_000;

/// The tail of `text` to show: at most `max` characters, from a line start; and how
/// many lines are left out before it.
export function outputTail(text, max = SHOW_OUTPUT_CHARS) {
  if (text.length <= max) return { shown: text, hiddenLines: 0 };
  let start = text.length - max;
  const nl = text.indexOf('\n', start);
  if (nl >= 0 && nl < text.length - 1) start = nl + 1;
  let hiddenLines = 0;
  for (let i = text.indexOf('\n'); i >= 0 && i < start; i = text.indexOf('\n', i + 1)) hiddenLines++;
  return { shown: text.slice(start), hiddenLines: Math.max(hiddenLines, 1) };
}
