// A virtualised table: only the rows in view are in the DOM, pages of rows come from
// the backend on demand. The maths and the page cache are pure and tested; TableView
// is the DOM part.

import { h, clear } from './dom.js';
import { count, readableCell } from './format.js';

/// Browsers cap element heights (WebKit near 2^25 px); beyond this the scroll range
/// is compressed and rows are mapped proportionally.
export const MAX_SCROLL_PX = 8_000_000;

/// Height of the scrollable content for `total` rows.
export function contentHeight(total, rowH, maxPx = MAX_SCROLL_PX) {
  return Math.min(total * rowH, maxPx);
}

/// The first row in view at `scrollTop`, for a viewport showing `viewRows` rows.
export function firstRowAt(scrollTop, viewportH, rowH, total, maxPx = MAX_SCROLL_PX) {
  const viewRows = Math.ceil(viewportH / rowH);
  const full = total * rowH;
  let first;
  if (full <= maxPx) {
    first = Math.floor(scrollTop / rowH);
  } else {
    const range = maxPx - viewportH;
    const frac = range > 0 ? scrollTop / range : 0;
    first = Math.round(frac * Math.max(0, total - viewRows));
  }
  return Math.max(0, Math.min(first, Math.max(0, total - viewRows)));
}

/// The scrollTop that shows `row` at the top.
export function scrollTopFor(row, viewportH, rowH, total, maxPx = MAX_SCROLL_PX) {
  const viewRows = Math.ceil(viewportH / rowH);
  const full = total * rowH;
  if (full <= maxPx) return row * rowH;
  const range = maxPx - viewportH;
  return Math.round((row / Math.max(1, total - viewRows)) * range);
}

/// Rows [first, last) to render, with some overscan, clamped to the table.
export function visibleRange(scrollTop, viewportH, rowH, total, overscan = 8, maxPx = MAX_SCROLL_PX) {
  const first = firstRowAt(scrollTop, viewportH, rowH, total, maxPx);
  const last = Math.min(total, first + Math.ceil(viewportH / rowH) + overscan);
  return { first: Math.max(0, first), last };
}

/// The page numbers holding rows [first, last).
export function pagesFor(first, last, pageSize) {
  if (last <= first) return [];
  const out = [];
  for (let p = Math.floor(first / pageSize); p <= Math.floor((last - 1) / pageSize); p++) out.push(p);
  return out;
}

/// Pages of rows kept in memory, least recently used dropped first.
export class PageCache {
  constructor(limit = 40) { this.limit = limit; this.map = new Map(); }
  get(p) {
    if (!this.map.has(p)) return undefined;
    const v = this.map.get(p);
    this.map.delete(p); this.map.set(p, v);
    return v;
  }
  has(p) { return this.map.has(p); }
  set(p, rows) {
    this.map.delete(p); this.map.set(p, rows);
    while (this.map.size > this.limit) this.map.delete(this.map.keys().next().value);
  }
  /// Row `i` if its page is loaded.
  row(i, pageSize) {
    const rows = this.map.get(Math.floor(i / pageSize));
    return rows ? rows[i % pageSize] : undefined;
  }
  /// The page holding row `i` and the row's place in it, if loaded.
  at(i, pageSize) {
    const entry = this.map.get(Math.floor(i / pageSize));
    return entry ? { entry, k: i % pageSize } : undefined;
  }
  get size() { return this.map.size; }
}

/// A table view over `fetchPage(offset, limit) -> Promise<page>`, where a page is the
/// core's ViewPage (or a CsvPage): `rows`, `offset`, `total_rows`, and for a view
/// `kept_rows`, `row_numbers` (each row's number in the file) and `formulas`. Whoever
/// changes what `fetchPage` returns (a filter, a sort) calls `reset()`.
/// Hooks: `header(j, th)` decorates a header cell; `profile(j)` returns the element
/// shown under header `j` (a column's summary), or null for no summary row.
export class TableView {
  constructor(fetchPage, { rowH = 26, pageSize = 200, height = 320, header = null, profile = null, profileH = 46 } = {}) {
    this.maxHeight = height;
    this.header = header;
    this.profile = profile;
    this.profileH = profileH;
    this.showProfile = false;
    // Pages asked for before a reset are dropped when they arrive.
    this.generation = 0;
    this.fetchPage = fetchPage;
    this.rowH = rowH;
    this.pageSize = pageSize;
    this.cache = new PageCache();
    this.pending = new Set();
    this.total = 0;
    this.known = false;
    this.headers = [];
    this.onPage = null;
    this.el = h('div', { class: 'vtable' });
    this.info = h('div', { class: 'vtable-info muted' });
    this.jump = h('input', { type: 'number', min: '1', placeholder: 'Go to row', class: 'vtable-jump', title: 'Jump to a row of this view' });
    this.scroller = h('div', { class: 'vtable-scroll' });
    this.scroller.style.height = `${height}px`;
    this.spacer = h('div', { class: 'vtable-spacer' });
    this.table = h('table', { class: 'vtable-table' });
    this.spacer.append(this.table);
    this.scroller.append(this.spacer);
    this.bar = h('div', { class: 'vtable-bar' }, this.info, this.jump);
    this.el.append(this.bar, this.scroller);
    this.scroller.addEventListener('scroll', () => this.schedule(), { passive: true });
    // Rows in view depend on the height, known only once the table is on screen.
    if (typeof ResizeObserver !== 'undefined') new ResizeObserver(() => this.schedule()).observe(this.scroller);
    this.table.addEventListener('copy', (e) => copyExact(e, this.table, this.headers));
    this.jump.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') { e.preventDefault(); this.goTo(Number(this.jump.value) - 1); }
    });
  }

  /// Height of the header rows (names, and the summaries when shown).
  get headH() { return this.rowH + (this.showProfile && this.profile ? this.profileH : 0); }

  async start() {
    const page = await this.fetchPage(0, this.pageSize);
    this.headers = page.headers;
    this.cache.set(0, pageEntry(page));
    this.setTotal(page);
    this.render();
    this.awaitCount();
    return page;
  }

  /// The first page of a big file comes before its rows are counted (the backend
  /// indexes the file in the background); ask again until the count is known.
  awaitCount(tries = 120) {
    if (this.known || tries <= 0) return;
    setTimeout(() => {
      if (this.known) return;
      const gen = this.generation;
      this.fetchPage(0, 1).then((page) => {
        if (gen === this.generation && rowsOf(page) != null) { this.setTotal(page); this.schedule(); }
        else this.awaitCount(tries - 1);
      }, () => {});
    }, 500);
  }

  /// What fetchPage returns changed: drop every page, show the first of the new view.
  /// Resolves with that page (or rejects with the backend's error, also shown).
  reset(busy = 'Working…') {
    this.generation += 1;
    this.cache = new PageCache();
    this.pending.clear();
    this.scroller.scrollTop = 0;
    this.info.textContent = busy;
    this.el.classList.add('busy');
    const gen = this.generation;
    this.pending.add(0);
    return this.fetchPage(0, this.pageSize).then((page) => {
      if (gen !== this.generation) return null;
      this.el.classList.remove('busy');
      this.pending.delete(0);
      this.known = false;
      this.cache.set(0, pageEntry(page));
      this.setTotal(page);
      this.render();
      this.awaitCount();
      return page;
    }, (e) => {
      if (gen === this.generation) { this.el.classList.remove('busy'); this.pending.delete(0); this.info.textContent = String(e); }
      throw e;
    });
  }

  setTotal(page) {
    const rows = rowsOf(page);
    if (rows != null) { this.total = rows; this.known = true; }
    else this.total = Math.max(this.total, page.offset + page.rows.length + (page.rows.length ? this.pageSize : 0));
    this.resize();
    const note = page.truncated_cells ? ` · ${count(page.truncated_cells)} long cells cut` : '';
    this.info.textContent = `${count(this.total)}${this.known ? '' : '+'} rows × ${this.headers.length} columns${note}`;
    this.onPage?.(page);
  }

  resize() {
    this.spacer.style.height = `${contentHeight(this.total, this.rowH) + this.headH}px`;
    // Short tables take only the room they need (header, rows, a scrollbar).
    this.scroller.style.height = `${Math.min(this.maxHeight, this.total * this.rowH + this.headH + 18)}px`;
  }

  /// Show or hide the summary row under the headers.
  setProfile(on) {
    this.showProfile = on;
    this.resize();
    this.render();
  }

  goTo(row) {
    if (!(row >= 0)) return;
    row = Math.min(row, Math.max(0, this.total - 1));
    this.scroller.scrollTop = scrollTopFor(row, this.scroller.clientHeight - this.headH, this.rowH, this.total);
    this.schedule();
  }

  schedule() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => { this.frame = null; this.render(); });
  }

  load(p) {
    if (this.pending.has(p) || this.cache.has(p)) return;
    this.pending.add(p);
    const gen = this.generation;
    this.fetchPage(p * this.pageSize, this.pageSize).then((page) => {
      if (gen !== this.generation) return;
      this.pending.delete(p);
      this.cache.set(p, pageEntry(page));
      const rows = rowsOf(page);
      if (rows != null && (!this.known || rows !== this.total)) this.setTotal(page);
      this.schedule();
    }, (e) => { if (gen === this.generation) { this.pending.delete(p); this.info.textContent = String(e); } });
  }

  headerCell(name, j) {
    const th = h('th', { title: name }, name);
    this.header?.(j, th);
    return th;
  }

  render() {
    const viewH = Math.max(this.rowH, this.scroller.clientHeight - this.headH);
    const { first, last } = visibleRange(this.scroller.scrollTop, viewH, this.rowH, this.total, 4);
    for (const p of pagesFor(first, last, this.pageSize)) this.load(p);
    const head = [h('tr', {}, h('th', { class: 'rownum' }, '#'), ...this.headers.map((c, j) => this.headerCell(c, j)))];
    if (this.showProfile && this.profile) {
      const cells = this.headers.map((_, j) => h('th', { class: 'profile-cell' }, this.profile(j) || ''));
      const tr = h('tr', { class: 'profile-row' }, h('th', { class: 'rownum profile-cell' }, ''), ...cells);
      tr.style.height = `${this.profileH}px`;
      head.push(tr);
    }
    const body = [];
    for (let i = first; i < last; i++) {
      const at = this.cache.at(i, this.pageSize);
      const r = at?.entry.rows[at.k];
      if (r === undefined && this.known && i >= this.total) break;
      if (r === undefined) {
        body.push(h('tr', {}, h('td', { class: 'rownum' }, String(i + 1)), h('td', { class: 'muted', colspan: String(this.headers.length || 1) }, '…')));
        continue;
      }
      const { entry, k } = at;
      const fileRow = entry.rowNumbers ? entry.rowNumbers[k] : i;
      const num = h('td', { class: 'rownum', title: `row ${count(fileRow + 1)} of the file` }, String(fileRow + 1));
      const cells = this.headers.map((_, j) => valueCell(r[j], entry.formulas.has(`${k}:${j}`)));
      body.push(h('tr', {}, num, ...cells));
    }
    clear(this.table);
    this.table.append(h('thead', {}, ...head), h('tbody', {}, ...body));
    this.table.style.transform = `translateY(${this.scroller.scrollTop}px)`;
    this.firstShown = first;
  }
}

/// The rows of a view (what its filters keep), or of the file; `null` while counting.
export function rowsOf(page) {
  if (page.kept_rows !== undefined) return page.kept_rows;
  return page.total_rows;
}

/// A page as the cache keeps it: rows, their numbers in the file, and which cells
/// look like spreadsheet formulas (as "row:column" of the page).
export function pageEntry(page) {
  return {
    rows: page.rows,
    rowNumbers: page.row_numbers ?? null,
    formulas: new Set((page.formulas ?? []).map(([r, c]) => `${r}:${c}`)),
  };
}

/// A cell: numbers rounded for reading, the exact value in `title` (hover) and
/// `data-exact` (copies).
function valueCell(v, formula = false) {
  const exact = v ?? '';
  const { text, num } = readableCell(exact);
  if (formula) {
    const title = `${exact}\n\nStarts like a formula: a spreadsheet that opens this table would run it. Sandalyst shows it as text.`;
    return h('td', { title, class: 'formula', dataset: { exact } }, h('span', { class: 'formula-mark', 'aria-label': 'formula-like' }, '⚠'), text);
  }
  return h('td', { title: exact, class: num ? 'num' : null, dataset: { exact } }, text);
}

/// A cell as TSV: quoted (quotes doubled) when it holds a tab, a line break or a quote,
/// the way spreadsheets write and paste it.
export function tsvField(v) {
  const s = String(v ?? '');
  return /[\t\n\r"]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

/// Selected cells as TSV: a line of their columns' names, then a line per row; `rows`
/// holds each row's selected cells as [column index, exact value].
export function selectionTsv(headers, rows) {
  const cols = [...new Set(rows.flatMap((r) => r.map(([j]) => j)))].sort((a, b) => a - b);
  const lines = [cols.map((j) => tsvField(headers[j])).join('\t')];
  for (const r of rows) {
    const byCol = new Map(r);
    lines.push(cols.map((j) => tsvField(byCol.get(j))).join('\t'));
  }
  return lines.join('\n');
}

/// Copying cells of the table copies their exact values with their columns' names.
function copyExact(e, table, headers) {
  const sel = window.getSelection();
  if (!sel || sel.isCollapsed || !e.clipboardData) return;
  const rows = [];
  for (const tr of table.querySelectorAll('tbody tr')) {
    const cells = [...tr.querySelectorAll('td[data-exact]')]
      .map((td, j) => [j, td])
      .filter(([, td]) => sel.containsNode(td, true));
    if (cells.length) rows.push(cells.map(([j, td]) => [j, td.dataset.exact]));
  }
  if (!rows.length) return;
  e.clipboardData.setData('text/plain', selectionTsv(headers, rows));
  e.preventDefault();
}
