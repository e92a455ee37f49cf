// The assistant's text as rich text. The Markdown is rendered and sanitised by the
// core (the report renderer's allow-list: raw HTML shown as text, remote images
// blocked); here code blocks are highlighted, links made inert as in reports, and
// "Copy as Markdown" copies what the model wrote.
//
// While a reply streams, its text is rendered at most every RENDER_INTERVAL ms, one
// rendering at a time, and the last rendering stays on screen until the next one
// arrives: no flicker and no storm of calls however fast the deltas come. The final
// text is always rendered.

import { h } from './dom.js';
import { tokenize } from './highlight.js';

export const RENDER_INTERVAL = 100;

/// Renders the newest text it was given, never two at once, at most once per
/// `interval` ms while the text is not final. `render(text)` returns a promise.
/// `now` and `later` are injectable for tests.
export class RenderQueue {
  constructor(render, { interval = RENDER_INTERVAL, now = () => Date.now(), later = (f, ms) => setTimeout(f, ms) } = {}) {
    Object.assign(this, { render, interval, now, later });
    this.text = null; // the newest text wanted
    this.final = false;
    this.rendered = null; // the text of the last rendering started
    this.lastAt = -Infinity;
    this.busy = false;
    this.timer = false;
  }

  want(text, final = false) {
    this.text = text;
    this.final = this.final || final;
    this.pump();
  }

  pump() {
    if (this.busy || this.timer || this.text === null || this.text === this.rendered) return;
    const wait = this.final ? 0 : this.lastAt + this.interval - this.now();
    if (wait > 0) {
      this.timer = true;
      this.later(() => { this.timer = false; this.pump(); }, wait);
      return;
    }
    const text = this.text;
    this.rendered = text;
    this.lastAt = this.now();
    this.busy = true;
    Promise.resolve()
      .then(() => this.render(text))
      .catch(() => {})
      .finally(() => { this.busy = false; this.pump(); });
  }
}

// The highlighter knows Python and shell; blocks in other languages are left plain.
const HIGHLIGHTED = new Set(['', 'python', 'py', 'sh', 'bash', 'shell', 'console']);

/// The language of a rendered `<code>` (its `language-*` class), or ''.
export function codeLanguage(className) {
  const m = /(?:^|\s)language-([a-z0-9]+)/.exec(className || '');
  return m ? m[1] : '';
}

/// Sanitised HTML from the core as elements: highlighted code, inert links.
export function richElement(html, cls = 'md') {
  const div = h('div', { class: cls });
  div.innerHTML = html; // sanitised by the core's Markdown renderer (ammonia allow-list)
  for (const a of div.querySelectorAll('a[href]')) {
    a.addEventListener('click', (e) => e.preventDefault());
    a.title = a.getAttribute('href');
  }
  for (const code of div.querySelectorAll('pre > code')) {
    if (!HIGHLIGHTED.has(codeLanguage(code.className))) continue;
    const text = code.textContent;
    code.replaceChildren(...tokenize(text).map(([c, t]) => (c ? h('span', { class: `t-${c}` }, t) : document.createTextNode(t))));
  }
  // Wide tables scroll inside the message instead of widening the conversation.
  for (const t of div.querySelectorAll('table')) {
    const wrap = h('div', { class: 'md-table' });
    t.replaceWith(wrap);
    wrap.append(t);
  }
  return div;
}

/// Put text on the clipboard: the async API where the page has it, else a selection.
export async function copyText(text) {
  if (navigator.clipboard?.writeText) {
    try { await navigator.clipboard.writeText(text); return; } catch { /* fall back */ }
  }
  const area = h('textarea', { class: 'offscreen', readonly: true });
  area.value = text;
  document.body.append(area);
  area.select();
  const ok = document.execCommand('copy');
  area.remove();
  if (!ok) throw new Error('the clipboard cannot be written here');
}

/// One text item of the conversation, kept across redraws: `update(item)` with each
/// new state of it; `renderHtml(text)` resolves to the core's HTML for `text`.
export class AnswerView {
  constructor(renderHtml) {
    this.text = '';
    this.body = h('div', { class: 'md plain' });
    this.copyBtn = h('button', { class: 'ghost small md-copy', title: 'Copy the text as the model wrote it (Markdown)' }, 'Copy as Markdown');
    this.copyBtn.addEventListener('click', () => this.copy());
    this.el = h('div', { class: 'assistant-text' }, this.body, h('div', { class: 'md-actions' }, this.copyBtn));
    this.shownHtml = false;
    this.queue = new RenderQueue(async (text) => {
      let el;
      try { el = richElement(await renderHtml(text)); } catch { el = h('div', { class: 'md plain' }, text); }
      this.body.replaceWith(el);
      this.body = el;
      this.shownHtml = true;
      this.el.dataset.rendered = text === this.text && !this.streaming ? 'final' : 'partial';
    });
  }

  update(item) {
    this.text = item.text ?? '';
    this.streaming = !!item.streaming;
    this.el.classList.toggle('streaming', this.streaming);
    // Until the first rendering arrives the text is shown as it is.
    if (!this.shownHtml) this.body.textContent = this.text;
    this.queue.want(this.text, !this.streaming);
    // The final text was already rendered while it streamed: it is final now.
    if (!this.streaming && this.shownHtml && !this.queue.busy && this.queue.rendered === this.text) this.el.dataset.rendered = 'final';
  }

  async copy() {
    try {
      await copyText(this.text);
      this.copyBtn.textContent = 'Copied';
    } catch (e) {
      this.copyBtn.textContent = String(e.message ?? e);
    }
    setTimeout(() => { this.copyBtn.textContent = 'Copy as Markdown'; }, 1500);
  }
}
