// The data explorer: a table file (input or output, any format the core reads) as a
// virtualised grid with a summary row under the headers, a filter bar that says how
// many rows are kept, sorting by several columns (Shift+click adds a key), a panel per
// column with its statistics and its filter, and the way back into the conversation:
// "Ask about this view" and "Copy as code". Every number comes from the core
// (explore_page, explore_summary, explore_code), computed in Rust and paged.

import { h, clear } from './dom.js';
import { count, readableCell } from './format.js';
import { TableView } from './vtable.js';
import { invoke, pickSave } from './api.js';
import { copyText } from './markdown.js';
import * as m from './explore_model.js';

const SVG = 'http://www.w3.org/2000/svg';

function svg(tag, attrs = {}) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  return el;
}

/// A small histogram (numbers, dates) as inline SVG bars.
function histogramSvg(histogram, width, height, cls = 'spark') {
  const box = svg('svg', { width, height, viewBox: `0 0 ${width} ${height}`, class: cls, role: 'img' });
  for (const b of m.histogramBars(histogram, width, height)) {
    const r = svg('rect', { x: b.x.toFixed(1), y: b.y.toFixed(1), width: b.w.toFixed(1), height: b.h.toFixed(1) });
    const t = svg('title');
    t.textContent = `${count(b.bin.count)} rows`;
    r.append(t);
    box.append(r);
  }
  return box;
}

/// The missing share as a thin bar: filled part = values present.
function missingBar(c) {
  const total = c.count + c.missing;
  const present = total ? c.count / total : 1;
  const bar = h('div', { class: 'miss-bar', title: `${count(c.missing)} missing (${m.share(c.missing, total)})` });
  bar.append(h('div', { class: 'miss-fill' }));
  bar.firstChild.style.width = `${(present * 100).toFixed(1)}%`;
  return bar;
}

/// The cell under a header: a histogram or the top values, and a line of counts.
function profileCell(c) {
  if (!c) return h('div', { class: 'profile muted' }, '…');
  const graph = c.histogram?.length
    ? histogramSvg(c.histogram, 120, 22)
    : h('div', { class: 'freq-mini' }, ...m.frequencyBars(c.top.slice(0, 3), c.count).map((b) => {
      const row = h('div', { class: 'freq-row', title: `${b.value}: ${count(b.count)} (${m.share(b.count, c.count)})` },
        h('span', { class: 'freq-fill' }), h('span', { class: 'freq-label' }, b.value === '' ? '(empty)' : b.value));
      row.firstChild.style.width = `${(b.width * 100).toFixed(0)}%`;
      return row;
    }));
  return h('div', { class: 'profile', dataset: { kind: c.kind } }, graph, missingBar(c), h('div', { class: 'profile-line muted' }, m.profileLine(c)));
}

/// One column's statistics as label/value rows.
function statRows(c) {
  const total = c.count + c.missing;
  const rows = [
    ['Type', c.kind],
    ['Values', count(c.count)],
    ['Missing', `${count(c.missing)} (${m.share(c.missing, total)})`],
    ['Distinct', `${c.distinct_exact ? '' : '≈ '}${count(c.distinct)}`],
  ];
  if (c.min != null) rows.push(['Min', c.min], ['Max', c.max]);
  if (c.mean != null) rows.push(['Mean', readableCell(String(c.mean)).text]);
  if (c.median != null) rows.push(['Median', readableCell(String(c.median)).text]);
  if (c.std != null) rows.push(['Std. dev.', readableCell(String(c.std)).text]);
  if (c.formula_cells) rows.push(['Formula-like', `${count(c.formula_cells)} cells start like a spreadsheet formula`]);
  return h('dl', { class: 'stat-grid' }, ...rows.flatMap(([k, v]) => [h('dt', {}, k), h('dd', { title: String(v) }, String(v))]));
}

export class Explorer {
  /// `path`: an input's name (`input`) or a path in the session folder; `sheet`: the
  /// workbook's sheet.
  constructor(sessionId, path, { input = false, sheet = null, height = 320 } = {}) {
    this.sessionId = sessionId;
    this.path = path;
    this.input = input;
    this.view = m.emptyView(sheet);
    this.summary = null;
    this.summaryKey = null;
    this.kinds = [];
    this.total = null;
    this.kept = null;
    this.panel = null;
    this.el = h('div', { class: 'explorer' });
    this.tv = new TableView((offset, limit) => this.page(offset, limit), {
      height,
      header: (j, th) => this.decorateHeader(j, th),
      profile: (j) => profileCell(this.summary?.columns[j]),
    });
    this.tv.onPage = (p) => this.onPage(p);
    this.summaryBtn = h('button', { class: 'small ghost toggle', title: 'Show each column\u2019s type, missing values, distinct values and distribution', onclick: () => this.toggleSummary() }, 'Summary');
    this.chips = h('span', { class: 'chips' });
    // The rows kept (and the sort) are the grid's own status line, where its busy
    // states and errors show too.
    this.keptEl = this.tv.info;
    this.keptEl.classList.add('kept');
    this.askBtn = h('button', { class: 'small ghost', title: 'Put this view (filters and sort) in the ask box as a sentence and pandas code', onclick: () => this.ask() }, 'Ask about this view');
    this.codeBtn = h('button', { class: 'small ghost', title: 'Copy pandas code that selects the rows of this view', onclick: () => this.copyCode() }, 'Copy as code');
    // One label, a button a format: short enough for the bar at 1024x768, and each
    // button says what it writes.
    const saveBtn = (format) => {
      const f = m.SAVE_FORMATS[format];
      return h('button', { class: 'small ghost', 'aria-label': `Save view as ${f.label}`, title: `Save every row of this view (its filters and sort) as ${f.what}`, onclick: () => this.save(format) }, f.label);
    };
    this.saveAs = h('span', { class: 'save-as', role: 'group', 'aria-label': 'Save view as' }, h('span', { class: 'muted' }, 'Save view as'), saveBtn('csv'), saveBtn('parquet'));
    this.toolbar = h('div', { class: 'explorer-bar' }, this.summaryBtn, this.chips, h('span', { class: 'spacer' }), this.askBtn, this.codeBtn, this.saveAs);
    this.el.append(this.toolbar, this.tv.el);
    this.el.addEventListener('keydown', (e) => { if (e.key === 'Escape' && this.panel) { e.stopPropagation(); this.closePanel(); } });
  }

  start() {
    return this.tv.start().catch((e) => { this.tv.info.textContent = String(e); throw e; });
  }

  page(offset, limit) {
    return invoke('explore_page', {
      sessionId: this.sessionId, path: this.path, input: this.input,
      request: { view: this.view, offset, limit },
    });
  }

  args() {
    return { sessionId: this.sessionId, path: this.path, input: this.input, view: this.view };
  }

  onPage(p) {
    if (p.kinds) this.kinds = p.kinds;
    this.total = p.total_rows;
    this.kept = p.kept_rows;
    this.drawBar();
  }

  drawBar() {
    const headers = this.tv.headers;
    clear(this.chips).append(...this.view.filters.map((f) => h('span', { class: 'chip', title: 'Click to change this filter' },
      h('button', { class: 'chip-text link', onclick: () => this.openPanel(f.column) }, m.filterText(f, headers)),
      h('button', { class: 'chip-x', title: 'Remove this filter', 'aria-label': 'Remove filter', onclick: () => this.setFilter(f.column, null) }, '×'))));
    const filtered = this.view.filters.length > 0;
    const cols = headers.length ? ` × ${count(headers.length)} columns` : '';
    this.keptEl.textContent = m.keptText(this.kept, this.total, filtered) + cols;
    this.keptEl.classList.toggle('filtered', filtered);
    if (this.view.sort.length) {
      const words = this.view.sort.map((k) => `${headers[k.column]} ${k.descending ? '↓' : '↑'}`).join(', ');
      this.keptEl.textContent += ` · sorted by ${words}`;
    }
  }

  decorateHeader(j, th) {
    const mark = m.sortMark(this.view.sort, j);
    th.classList.add('sortable');
    if (mark) th.classList.add('sorted');
    th.title = `${this.tv.headers[j]}${this.kinds[j] ? ` (${this.kinds[j]})` : ''}: click to sort, Shift+click to add to the sort`;
    th.textContent = '';
    th.append(h('span', { class: 'th-name' }, this.tv.headers[j]), mark ? h('span', { class: 'th-mark' }, ` ${mark}`) : '',
      h('button', { class: 'th-menu', title: 'Statistics and filter of this column', 'aria-label': `Column ${this.tv.headers[j]}`, onclick: (e) => { e.stopPropagation(); this.openPanel(j); } }, '▾'));
    th.onclick = (e) => this.sortBy(j, e.shiftKey);
  }

  /// `only`: sort by this column alone, ascending (the panel's button).
  async sortBy(column, additive, only = false) {
    const sort = only ? [{ column, descending: false }] : m.toggleSort(this.view.sort, column, additive);
    this.view = { ...this.view, sort };
    await this.tv.reset(this.view.sort.length ? 'Sorting…' : 'Working…').catch(() => {});
  }

  async setFilter(column, filter) {
    this.view = m.withColumnFilter(this.view, column, filter);
    this.closePanel();
    this.drawBar();
    await this.tv.reset('Filtering…').catch(() => {});
    if (this.tv.showProfile) this.loadSummary();
  }

  async toggleSummary() {
    const on = !this.tv.showProfile;
    this.summaryBtn.classList.toggle('on', on);
    this.tv.setProfile(on);
    if (on) await this.loadSummary();
  }

  /// The summary of the rows the filters keep, once per set of filters.
  async loadSummary() {
    const key = JSON.stringify(this.view.filters);
    if (this.summaryKey === key && this.summary) return this.summary;
    this.summaryKey = key;
    this.summary = null;
    this.tv.render();
    this.summaryBtn.textContent = 'Summary…';
    try {
      const s = await invoke('explore_summary', this.args());
      if (this.summaryKey !== key) return null;
      this.summary = s;
      this.tv.render();
      this.panel?.refresh?.();
      return s;
    } catch (e) {
      if (this.summaryKey === key) this.summaryKey = null;
      this.tv.info.textContent = String(e);
      return null;
    } finally {
      this.summaryBtn.textContent = 'Summary';
    }
  }

  closePanel() {
    this.panel?.el.remove();
    this.panel = null;
  }

  /// The panel of column `j`: its statistics (for the rows kept) and its filter.
  openPanel(j) {
    this.closePanel();
    const name = this.tv.headers[j];
    const kind = this.kinds[j] || 'text';
    const current = m.filterOf(this.view, j);
    const start = m.defaultFilter(kind, current);
    const stats = h('div', { class: 'col-stats' }, h('div', { class: 'muted' }, 'Summarising…'));
    const opSel = h('select', { class: 'small', 'aria-label': 'Filter' },
      h('option', { value: 'values' }, 'is one of'),
      h('option', { value: 'range' }, m.isTemporal(kind) ? 'between (dates)' : 'between'),
      h('option', { value: 'contains' }, 'contains'),
      h('option', { value: 'missing' }, 'is missing'),
      h('option', { value: 'not_missing' }, 'is not missing'));
    opSel.value = start.op;
    const ph = m.isTemporal(kind) ? 'YYYY-MM-DD' : '';
    const min = h('input', { class: 'small', name: 'min', placeholder: ph || 'min', value: start.min ?? '' });
    const max = h('input', { class: 'small', name: 'max', placeholder: ph || 'max', value: start.max ?? '' });
    const text = h('input', { class: 'small', name: 'text', placeholder: 'text', value: start.text ?? '' });
    const chosen = new Set(start.values ?? []);
    const typed = h('input', { class: 'small', name: 'value', placeholder: 'a value, Enter to add' });
    const valueList = h('div', { class: 'value-list' });
    const drawValues = () => {
      const top = this.summary?.columns[j]?.top ?? [];
      const seen = new Set(top.map((t) => t.value));
      const extra = [...chosen].filter((v) => !seen.has(v)).map((value) => ({ value, count: null }));
      clear(valueList).append(...[...top, ...extra].map((t) => {
        const box = h('input', { type: 'checkbox', value: t.value });
        box.checked = chosen.has(t.value);
        box.addEventListener('change', () => { if (box.checked) chosen.add(t.value); else chosen.delete(t.value); });
        return h('label', { class: 'value-item' }, box, h('span', {}, t.value === '' ? '(missing)' : t.value),
          t.count != null ? h('span', { class: 'muted' }, ` ${count(t.count)}`) : '');
      }));
    };
    typed.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && typed.value !== '') { e.preventDefault(); chosen.add(typed.value); typed.value = ''; drawValues(); }
    });
    const forms = {
      values: h('div', { class: 'op-form' }, valueList, typed),
      range: h('div', { class: 'op-form range' }, min, h('span', { class: 'muted' }, '–'), max),
      contains: h('div', { class: 'op-form' }, text),
      missing: h('div', { class: 'op-form' }),
      not_missing: h('div', { class: 'op-form' }),
    };
    const showForm = () => { for (const [op, f] of Object.entries(forms)) f.hidden = op !== opSel.value; };
    opSel.addEventListener('change', showForm);
    const apply = () => {
      const f = m.formFilter(opSel.value, { values: [...chosen], min: min.value, max: max.value, text: text.value });
      this.setFilter(j, f);
    };
    for (const i of [min, max, text]) i.addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); apply(); } });
    const el = h('div', { class: 'col-panel', role: 'dialog', 'aria-label': `Column ${name}`, tabindex: '-1' },
      h('header', { class: 'col-panel-head' }, h('strong', {}, name), h('span', { class: 'muted' }, ` ${kind}`),
        h('span', { class: 'spacer' }),
        h('button', { class: 'small ghost', title: 'Sort ascending', onclick: () => { this.closePanel(); this.sortBy(j, false, true); } }, 'Sort ▲'),
        h('button', { class: 'small ghost', title: 'Close (Esc)', onclick: () => this.closePanel() }, '×')),
      stats,
      h('div', { class: 'col-filter' }, h('span', { class: 'muted' }, 'Keep rows where it '), opSel, ...Object.values(forms)),
      h('div', { class: 'col-actions' },
        current ? h('button', { class: 'small ghost', onclick: () => this.setFilter(j, null) }, 'Remove filter') : '',
        h('button', { class: 'small primary', onclick: apply }, 'Apply')));
    const refresh = () => {
      const c = this.summary?.columns[j];
      if (!c) return;
      const graph = c.histogram?.length ? histogramSvg(c.histogram, 260, 60, 'hist') : '';
      const axis = graph ? h('div', { class: 'hist-axis muted' }, h('span', {}, c.min ?? ''), h('span', {}, c.max ?? '')) : '';
      clear(stats).append(statRows(c), graph, axis);
      drawValues();
    };
    this.panel = { el, refresh };
    this.el.append(el);
    // Under the column's header, kept inside the explorer.
    const th = this.tv.table.querySelectorAll('thead tr:first-child th')[j + 1];
    if (th) {
      const box = this.el.getBoundingClientRect();
      const left = th.getBoundingClientRect().left - box.left;
      el.style.left = `${Math.max(4, Math.min(left, box.width - el.offsetWidth - 4))}px`;
    }
    showForm();
    drawValues();
    el.focus();
    if (this.summary) refresh(); else this.loadSummary();
  }

  async code() {
    return invoke('explore_code', this.args());
  }

  async ask() {
    try {
      const code = await this.code();
      document.dispatchEvent(new CustomEvent('sandalyst:ask-view', { detail: { text: m.askText(code) } }));
    } catch (e) { this.tv.info.textContent = String(e); }
  }

  /// Save every row of the view as `format` (a key of m.SAVE_FORMATS) where the person
  /// picks.
  async save(format) {
    try {
      const t = m.saveTarget(this.path, this.view, format);
      const dest = await pickSave(t.name, t.filters, 'Save the view as');
      if (!dest) return;
      const rows = await invoke('explore_save', { ...this.args(), dest, format: t.format });
      this.tv.info.textContent = `Saved ${count(rows)} rows to ${dest}`;
    } catch (e) { this.tv.info.textContent = String(e); }
  }

  async copyCode() {
    try {
      const code = await this.code();
      await copyText(code.pandas);
      this.codeBtn.textContent = 'Copied';
      setTimeout(() => { this.codeBtn.textContent = 'Copy as code'; }, 1500);
    } catch (e) { this.tv.info.textContent = String(e); }
  }
}
