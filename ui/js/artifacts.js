// Artifacts and file previews: images (fit, 100%, wheel zoom, pan, on white),
// interactive charts (an HTML output, live in a sandboxed frame), tables (virtualised,
// paged from Rust), reports (HTML rendered and sanitised in Rust) and text. Everything
// from a file is inserted as text, except the report's HTML, which the core has
// sanitised against an allow-list (and the page's CSP forbids inline script in any
// case), and a chart, which never enters this page: it runs in its own frame.

import { h, clear } from './dom.js';
import { bytes as fmtBytes, baseName } from './format.js';
import { Explorer } from './explorer.js';
import { zoomAt, fit, actual, pan } from './zoom.js';
import { invoke } from './api.js';

export function imageViewer(url, name, { height = 420 } = {}) {
  const img = h('img', { class: 'iv-img', alt: name, draggable: 'false' });
  const stage = h('div', { class: 'iv-stage' }, img);
  stage.style.height = `${height}px`;
  const label = h('span', { class: 'muted iv-scale' });
  let view = { scale: 1, x: 0, y: 0 };
  let mode = 'fit';
  const apply = () => {
    img.style.transform = `translate(${view.x}px, ${view.y}px) scale(${view.scale})`;
    label.textContent = `${Math.round(view.scale * 100)}%`;
  };
  const set = (m) => {
    mode = m;
    const f = m === 'fit' ? fit : actual;
    view = f(img.naturalWidth, img.naturalHeight, stage.clientWidth, stage.clientHeight);
    apply();
  };
  img.addEventListener('load', () => {
    // Tall charts get a taller stage (up to most of the window), so "fit" stays legible.
    const want = stage.clientWidth * (img.naturalHeight / Math.max(1, img.naturalWidth));
    stage.style.height = `${Math.round(Math.max(160, Math.min(want, window.innerHeight * 0.8, Math.max(height, img.naturalHeight))))}px`;
    set(mode);
  });
  new ResizeObserver(() => { if (mode === 'fit') set('fit'); }).observe(stage);
  stage.addEventListener('wheel', (e) => {
    e.preventDefault();
    const r = stage.getBoundingClientRect();
    view = zoomAt(view, e.deltaY < 0 ? 1.15 : 1 / 1.15, e.clientX - r.left, e.clientY - r.top);
    mode = 'free';
    apply();
  }, { passive: false });
  let drag = null;
  stage.addEventListener('pointerdown', (e) => { drag = { x: e.clientX, y: e.clientY }; stage.setPointerCapture(e.pointerId); stage.classList.add('dragging'); });
  stage.addEventListener('pointermove', (e) => {
    if (!drag) return;
    view = pan(view, e.clientX - drag.x, e.clientY - drag.y);
    drag = { x: e.clientX, y: e.clientY };
    mode = 'free';
    apply();
  });
  const end = () => { drag = null; stage.classList.remove('dragging'); };
  stage.addEventListener('pointerup', end);
  stage.addEventListener('pointercancel', end);
  stage.addEventListener('dblclick', () => set(mode === 'fit' ? 'actual' : 'fit'));
  img.src = url;
  const bar = h('div', { class: 'iv-bar' },
    h('button', { class: 'small ghost', onclick: () => set('fit') }, 'Fit'),
    h('button', { class: 'small ghost', onclick: () => set('actual') }, '100%'),
    label,
    h('span', { class: 'muted' }, 'wheel to zoom, drag to pan'));
  return h('div', { class: 'image-viewer' }, bar, stage);
}

/// An interactive chart: the HTML output in a frame with scripts but an opaque origin
/// (no `allow-same-origin`: no storage, no cookies, no access to this page or its IPC;
/// no pop-ups, forms or top navigation either). The scheme serves it under a policy
/// that fetches nothing (core: artifacts::chart). `sandbox` is set before `src`, so
/// the first load is already sandboxed.
export function chartFrame(url, name, { height = 420 } = {}) {
  const frame = document.createElement('iframe');
  frame.setAttribute('sandbox', 'allow-scripts');
  frame.setAttribute('referrerpolicy', 'no-referrer');
  frame.setAttribute('title', `Interactive chart ${name}`);
  frame.className = 'chart-frame';
  frame.style.height = `${Math.max(height, 420)}px`;
  frame.src = url;
  return h('div', { class: 'chart-view' }, frame);
}

export function reportView(html) {
  const div = h('div', { class: 'report' });
  div.innerHTML = html; // sanitised by the core's Markdown renderer (ammonia allow-list)
  for (const a of div.querySelectorAll('a[href]')) {
    a.addEventListener('click', (e) => e.preventDefault());
    a.title = a.getAttribute('href');
  }
  return div;
}

/// A table file in the explorer (filters, sort, summaries); `sheet` of a workbook.
export function tableView(sessionId, path, sheet, { height = 320, input = false } = {}) {
  const ex = new Explorer(sessionId, path, { input, sheet, height });
  ex.start().catch(() => {});
  return ex.el;
}

/// The preview of one file of the session, as an element.
export async function previewElement(sessionId, path, opts = {}) {
  let p;
  try {
    p = await invoke('preview_file', { sessionId, path, input: !!opts.input });
  } catch (e) {
    if (opts.quiet) return null; // not there yet: the caller tries again later
    return h('div', { class: 'error-text pad' }, String(e));
  }
  const name = p.name;
  switch (p.view) {
    case 'image': return imageViewer(`${p.url}?v=${p.bytes}`, name, opts);
    case 'chart': return chartFrame(`${p.url}?v=${p.bytes}`, name, opts);
    case 'table':
    case 'data': return tableView(sessionId, path, null, opts);
    case 'sheet': {
      const holder = h('div', {});
      const pick = h('select', { class: 'small' }, ...p.sheets.map((s) => h('option', { value: s }, s)));
      pick.value = p.sheet;
      const show = (sheet) => { clear(holder).append(tableView(sessionId, path, sheet, opts)); };
      pick.addEventListener('change', () => show(pick.value));
      show(p.sheet);
      return h('div', {}, p.sheets.length > 1 ? h('label', { class: 'muted' }, 'Sheet ', pick) : '', holder);
    }
    case 'report': return h('div', {}, reportView(p.html), p.truncated ? h('p', { class: 'muted' }, 'The report is long; only its start is shown.') : '');
    case 'text': return h('div', {}, h('pre', { class: 'text-preview' }, p.text), p.truncated ? h('p', { class: 'muted' }, 'Only the start of the file is shown.') : '');
    default: return opts.input ? h('p', { class: 'muted pad' }, `${name}: no preview for this kind of file; the agent can still read it.`) : otherFile(sessionId, path, name, p.bytes);
  }
}

export function otherFile(sessionId, path, name, size) {
  return h('div', { class: 'other-file' },
    h('span', {}, `${baseName(name)} · ${fmtBytes(size)}`),
    h('button', { class: 'small', onclick: () => invoke('open_path', { sessionId, path, reveal: false }) }, 'Open'),
    h('button', { class: 'small ghost', onclick: () => invoke('open_path', { sessionId, path, reveal: true }) }, 'Show in folder'));
}
