// The data explorer's state as data: a view (the core's ViewSpec: filters, sort), how a
// click changes it, and how it reads to a person. Pure functions; explorer.js draws.

import { count } from './format.js';

export const emptyView = (sheet = null) => ({ sheet, filters: [], sort: [] });

/// The sort after a click on column `column`'s header. A plain click makes it the only
/// key (ascending, then descending, then the file's order); with Shift (`additive`)
/// it is added as the next key, flipped, then removed, and the other keys stay.
export function toggleSort(sort, column, additive = false) {
  const i = sort.findIndex((k) => k.column === column);
  if (!additive) {
    if (i < 0 || sort.length > 1) return [{ column, descending: false }];
    return sort[0].descending ? [] : [{ column, descending: true }];
  }
  if (i < 0) return [...sort, { column, descending: false }];
  if (!sort[i].descending) return sort.map((k, j) => (j === i ? { column, descending: true } : k));
  return sort.filter((_, j) => j !== i);
}

/// The header's mark for column `column`: "▲", "▼", with the key's rank when there
/// are several ("▲1", "▼2"); "" when it is not sorted on.
export function sortMark(sort, column) {
  const i = sort.findIndex((k) => k.column === column);
  if (i < 0) return '';
  const arrow = sort[i].descending ? '▼' : '▲';
  return sort.length > 1 ? `${arrow}${i + 1}` : arrow;
}

/// The view with column `column`'s filter replaced by `filter` (`null` removes it).
/// The window keeps one filter per column, so a chip says all there is about it.
export function withColumnFilter(view, column, filter) {
  const rest = view.filters.filter((f) => f.column !== column);
  return { ...view, filters: filter ? [...rest, { ...filter, column }] : rest };
}

export const filterOf = (view, column) => view.filters.find((f) => f.column === column) || null;

const quote = (s) => `“${s}”`;
function listWords(values) {
  const shown = values.slice(0, 3).map((v) => (v === '' ? '(missing)' : v));
  if (values.length > 3) return `one of ${count(values.length)} values (${shown.join(', ')}, …)`;
  if (shown.length === 1) return shown[0];
  return `${shown.slice(0, -1).join(', ')} or ${shown[shown.length - 1]}`;
}

/// A filter as a chip reads it: "region is Centro or Norte", "units 10 – 20".
export function filterText(f, headers) {
  const name = headers[f.column] ?? `column ${f.column + 1}`;
  switch (f.op) {
    case 'values': return `${name} is ${listWords(f.values)}`;
    case 'range': {
      const lo = f.min != null && f.min !== '';
      const hi = f.max != null && f.max !== '';
      if (lo && hi) return `${name} ${f.min} – ${f.max}`;
      if (lo) return `${name} ≥ ${f.min}`;
      if (hi) return `${name} ≤ ${f.max}`;
      return `${name}: any value`;
    }
    case 'contains': return `${name} contains ${quote(f.text)}`;
    case 'missing': return `${name} is missing`;
    case 'not_missing': return `${name} is not missing`;
    default: return `${name}: ${f.op}`;
  }
}

/// "1,234 of 1,000,000 rows (0.12%)"; without filters just the count.
export function keptText(kept, total, filtered) {
  if (kept == null) return 'counting rows…';
  if (!filtered || total == null) return `${count(kept)} rows`;
  return `${count(kept)} of ${count(total)} rows (${share(kept, total)})`;
}

/// A share for reading: "100%", "12.3%", "0.12%", "<0.01%", "0%".
export function share(part, whole) {
  if (!whole) return '0%';
  const p = (100 * part) / whole;
  if (p === 0) return '0%';
  if (p === 100) return '100%';
  if (p < 0.01) return '<0.01%';
  if (p < 1) return `${p.toFixed(2)}%`;
  if (p > 99.9) return '>99.9%';
  return `${p.toFixed(1)}%`;
}

/// A histogram as bars of a `width` × `height` box: one per bin, heights relative to
/// the tallest, a non-empty bin at least 1 px tall so that it is seen.
export function histogramBars(histogram, width, height) {
  const n = histogram.length;
  if (!n) return [];
  const top = Math.max(...histogram.map((b) => b.count), 1);
  const w = width / n;
  return histogram.map((b, i) => {
    const hh = b.count ? Math.max(1, (b.count / top) * height) : 0;
    return { x: i * w, y: height - hh, w: Math.max(1, w - 1), h: hh, bin: b };
  });
}

/// The top values as frequency bars: share of the non-missing count, widest = 1.
export function frequencyBars(top, nonMissing) {
  const most = Math.max(...top.map((t) => t.count), 1);
  return top.map((t) => ({ value: t.value, count: t.count, share: nonMissing ? t.count / nonMissing : 0, width: t.count / most }));
}

export const isNumeric = (kind) => kind === 'integer' || kind === 'number';
export const isTemporal = (kind) => kind === 'date' || kind === 'datetime';

/// The filter a column's panel starts with: its current one, or the natural one for
/// its kind (a range for numbers and dates, values otherwise).
export function defaultFilter(kind, current) {
  if (current) return current;
  if (isNumeric(kind) || isTemporal(kind)) return { op: 'range', min: null, max: null };
  return { op: 'values', values: [] };
}

/// The filter a panel's form describes, or `null` when it keeps every row (nothing
/// chosen, both bounds empty), so that "Apply" with an empty form clears it.
export function formFilter(op, { values = [], min = '', max = '', text = '' } = {}) {
  switch (op) {
    case 'values': return values.length ? { op, values } : null;
    case 'range': {
      const lo = String(min ?? '').trim();
      const hi = String(max ?? '').trim();
      return lo || hi ? { op, min: lo || null, max: hi || null } : null;
    }
    case 'contains': return text ? { op, text } : null;
    case 'missing':
    case 'not_missing': return { op };
    default: return null;
  }
}

/// What "Ask about this view" puts in the ask box: the sentence, and the pandas code
/// that selects the same rows, so that the model starts from exactly this view.
export function askText(code) {
  return `${code.sentence}\n\n\`\`\`python\n${code.pandas.trimEnd()}\n\`\`\`\n\n`;
}

/// A short line for a column's summary cell (under its header).
export function profileLine(c) {
  if (!c) return '';
  const miss = c.missing ? ` · ${share(c.missing, c.count + c.missing)} missing` : '';
  const distinct = `${c.distinct_exact ? '' : '≈'}${count(c.distinct)} distinct`;
  return `${distinct}${miss}`;
}

/// The formats "Save view as" writes (`explore_save`'s `format`), each with its save
/// dialog's filter.
export const SAVE_FORMATS = {
  csv: { label: 'CSV', ext: 'csv', kind: 'CSV table', what: 'a CSV file' },
  parquet: { label: 'Parquet', ext: 'parquet', kind: 'Parquet table', what: 'a Parquet file (numbers, dates and booleans keep their types)' },
};

/// What saving the view of the file `path` as `format` proposes: the file's own name
/// (with `_view` when the view filters or sorts, so it reads as a part of the file),
/// the dialog's filter, and the format `explore_save` writes.
export function saveTarget(path, view, format) {
  const f = SAVE_FORMATS[format];
  if (!f) throw new Error(`no format ${format}`);
  const base = path.split(/[\\/]/).pop().replace(/\.[^.]*$/, '');
  const suffix = view.filters.length || view.sort.length ? '_view' : '';
  return { name: `${base}${suffix}.${f.ext}`, filters: [{ name: f.kind, extensions: [f.ext] }], format };
}
