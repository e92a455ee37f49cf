// The plots pane: every chart of the session (plotlist.js), newest first, as
// thumbnails; the chosen one large with zoom and pan (artifacts.js' viewer), or live
// in its sandboxed frame for an interactive (HTML) chart, the call that made it (a
// click opens that cell), copy to the clipboard, and save as PNG (and as the SVG or
// PDF saved beside it) or as HTML. The pane is drawn in the side panel.

import { h, clear } from './dom.js';
import { invoke, pickSave } from './api.js';
import { imageViewer, chartFrame } from './artifacts.js';
import { fileUrl } from './runview.js';
import { madeByText, saveName, baseName } from './plotlist.js';

const FILTERS = {
  png: [{ name: 'PNG image', extensions: ['png'] }],
  svg: [{ name: 'SVG image', extensions: ['svg'] }],
  pdf: [{ name: 'PDF document', extensions: ['pdf'] }],
  html: [{ name: 'Interactive chart (HTML)', extensions: ['html', 'htm'] }],
  htm: [{ name: 'Interactive chart (HTML)', extensions: ['html', 'htm'] }],
};

function urlOf(sessionId, p) {
  return `${fileUrl(sessionId, p.path)}${p.version ? `?v=${encodeURIComponent(p.version)}` : ''}`;
}

/// Put a PNG of the session on the clipboard (its bytes come from the core: the
/// page may not read the pixels of the scheme's images). The write starts at once,
/// inside the click (WebKit takes the clipboard only from a person's gesture), with
/// the image as a promise that the core's bytes fulfil.
function copyImage(sessionId, path) {
  if (!navigator.clipboard?.write || typeof ClipboardItem === 'undefined') {
    return Promise.reject(new Error('this window cannot put images on the clipboard; use Save as PNG'));
  }
  const blob = invoke('read_image', { sessionId, path })
    .then((bytes) => new Blob([bytes instanceof ArrayBuffer ? bytes : new Uint8Array(bytes)], { type: 'image/png' }));
  const write = navigator.clipboard.write([new ClipboardItem({ 'image/png': blob })]);
  const late = new Promise((_, reject) => setTimeout(() => reject(new Error('the clipboard did not answer; use Save as PNG')), 8000));
  return Promise.race([write, late]);
}

export class PlotsPane {
  /// `onOpenCell(plot)` scrolls to the cell that made a plot and opens it;
  /// `say(text)` tells the person how an action went.
  constructor(sessionId, { onOpenCell, say }) {
    Object.assign(this, { sessionId, onOpenCell, say });
    this.plots = [];
    this.selected = null; // key
    this.shownKey = null; // key and version of the plot in the viewer
    this.view = h('div', { class: 'plot-view' });
    this.list = h('div', { class: 'plot-list', role: 'list' });
    this.el = h('div', { class: 'plots' }, this.view, this.list);
  }

  update(plots) {
    const sig = (ps) => ps.map((p) => `${p.key}@${p.version}`).join('|');
    const changed = sig(plots) !== sig(this.plots);
    this.plots = plots;
    if (!plots.some((p) => p.key === this.selected)) this.selected = plots[0]?.key ?? null;
    if (changed) this.drawList();
    this.drawView();
  }

  select(key, { openCell = false } = {}) {
    this.selected = key;
    for (const b of this.list.children) b.classList.toggle('selected', b.dataset.key === key);
    this.drawView();
    const p = this.plots.find((x) => x.key === key);
    if (openCell && p) this.onOpenCell(p);
  }

  drawList() {
    clear(this.list);
    if (!this.plots.length) {
      this.list.append(h('p', { class: 'muted pad' }, 'Charts and figures of this session appear here as the agent makes them.'));
      return;
    }
    for (const p of this.plots) {
      const b = h('button', {
        class: `plot-thumb${p.key === this.selected ? ' selected' : ''}`, role: 'listitem',
        title: `${p.name}: show it and open the cell that made it`,
        dataset: { key: p.key, path: p.path, call: p.callId || '', ask: p.askId },
        onclick: () => this.select(p.key, { openCell: true }),
      },
      // An interactive chart has no picture of itself: a tile says what it is.
      p.interactive
        ? h('span', { class: 'plot-thumb-img plot-thumb-live', 'aria-hidden': 'true' }, h('span', { class: 'plot-live-mark' }, '⤢'), h('span', {}, 'Interactive'))
        : h('span', { class: 'plot-thumb-img' }, h('img', { src: urlOf(this.sessionId, p), alt: p.name, loading: 'lazy' })),
      h('span', { class: 'plot-thumb-name' }, p.kind === 'file' ? baseName(p.path) : p.name),
      h('span', { class: 'muted plot-thumb-by' }, madeByText(p)));
      this.list.append(b);
    }
  }

  drawView() {
    const p = this.plots.find((x) => x.key === this.selected);
    const key = p ? `${p.key}@${p.version}` : null;
    if (key === this.shownKey) return;
    this.shownKey = key;
    clear(this.view);
    if (!p) return;
    const cell = h('button', { class: 'link plot-cell', title: 'Show the code that made it', onclick: () => this.onOpenCell(p) }, madeByText(p));
    const actions = h('div', { class: 'plot-actions' },
      h('span', { class: 'plot-name' }, p.kind === 'file' ? baseName(p.path) : p.name),
      cell,
      h('span', { class: 'spacer' }),
      p.png ? h('button', { class: 'small plot-copy', onclick: () => this.copy(p) }, 'Copy image') : '',
      h('button', { class: 'small plot-save', dataset: { format: p.png ? 'png' : extOf(p.path) }, onclick: () => this.save(p, p.path, p.png ? 'png' : extOf(p.path)) }, p.png ? 'Save as PNG' : `Save as ${extOf(p.path).toUpperCase()}`),
      ...p.alternates.map((a) => h('button', { class: 'small plot-save', dataset: { format: a.format }, onclick: () => this.save(p, a.path, a.format) }, `Save ${a.format.toUpperCase()}`)));
    const height = Math.max(220, Math.round((this.el.parentElement?.clientHeight || 700) * 0.5));
    this.view.append(actions, p.interactive
      ? chartFrame(urlOf(this.sessionId, p), p.name, { height })
      : imageViewer(urlOf(this.sessionId, p), p.name, { height }));
  }

  async copy(p) {
    try {
      await copyImage(this.sessionId, p.path);
      this.say(`Copied ${p.kind === 'file' ? baseName(p.path) : p.name} to the clipboard.`);
    } catch (e) { this.say(String(e.message ?? e)); }
  }

  async save(p, path, format) {
    const dest = await pickSave(saveName(p, format), FILTERS[format] ?? [], 'Save the chart as').catch(() => null);
    if (!dest) return;
    try {
      const written = await invoke('save_file', { sessionId: this.sessionId, path, dest });
      this.say(`Saved ${written}`);
    } catch (e) { this.say(String(e)); }
  }
}

function extOf(path) {
  const m = /\.([A-Za-z0-9]+)$/.exec(path);
  return m ? m[1].toLowerCase() : 'png';
}
