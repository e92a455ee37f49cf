// The conversation: each ask with its streaming text, code cells and their output,
// artifacts as they appear, and its stats. State comes from runstate.reduce; this
// module only draws it, updating the elements of items that changed.

import { h, clear } from './dom.js';
import * as fmt from './format.js';
import { tokenize } from './highlight.js';
import { endingText, statsLine } from './runstate.js';
import { previewElement } from './artifacts.js';
import { answerFor, barKey, choiceForEdit, mayTakeFocus, reasonToShow, rejectedText } from './approval.js';
import { AnswerView } from './markdown.js';
import { invoke } from './api.js';

function codeBlock(code) {
  return h('pre', { class: 'code' }, ...tokenize(code || '').map(([cls, text]) => (cls ? h('span', { class: `t-${cls}` }, text) : text)));
}

function outputElements(o, expanded, onExpand) {
  const cls = `out ${o.stream === 'stderr' ? 'stderr' : 'stdout'}`;
  const { shown, hiddenLines } = expanded ? { shown: o.text, hiddenLines: 0 } : fmt.outputTail(o.text);
  if (!hiddenLines) return [h('pre', { class: cls }, shown)];
  const n = hiddenLines.toLocaleString('en-US');
  return [
    h('div', { class: 'out-more muted' }, `… ${n} earlier line${hiddenLines === 1 ? '' : 's'} not shown `,
      h('button', { class: 'link', onclick: onExpand }, 'Show all')),
    h('pre', { class: cls }, shown),
  ];
}

const isShell = (name) => name === 'shell' || name === 'run_shell';

/// The cell's state as a pill: waiting for the analyst, running, or how it ended.
function statePill(item) {
  const r = item.result;
  const a = item.approval?.state;
  if (a === 'pending') return h('span', { class: 'pill waiting' }, 'waiting for you');
  if (a === 'rejected') return h('span', { class: 'pill bad' }, 'rejected');
  if (item.running) return h('span', { class: 'pill running' }, 'running');
  if (!r) return a === 'withdrawn' ? h('span', { class: 'pill bad' }, 'not run') : '';
  const ok = r.status === 'ok';
  return h('span', { class: `pill ${ok ? 'ok' : 'bad'}` }, ok ? 'done' : String(r.status).replace(/_/g, ' '));
}

/// How the analyst let the call through, in a word beside its state.
function approvalTag(item) {
  const a = item.approval;
  if (!a || a.state === 'pending' || a.state === 'rejected' || a.state === 'withdrawn') return '';
  const said = a.state === 'edited' ? 'edited by you' : 'approved';
  return h('span', { class: 'muted approval-tag' }, a.always ? `${said} · ${a.tool} always allowed` : said);
}

/// `parts`: the code block to reuse (highlighting is not redone for every chunk of
/// output), whether the outputs are shown whole, and how to ask for that; `bar`:
/// the approve bar of a call that waits.
function cellElement(item, sessionId, { code, expanded, onExpand, bar }) {
  const r = item.result;
  const dur = r && r.durationMs != null ? h('span', { class: 'muted' }, fmt.duration(r.durationMs) || `${Math.round(r.durationMs)} ms`) : '';
  const lang = isShell(item.name) ? 'Shell' : 'Python';
  const pending = item.approval?.state === 'pending';
  const det = h('details', { class: `cell${pending ? ' pending' : ''}`, open: true, dataset: { call: item.callId || '' } },
    h('summary', {}, h('span', { class: 'cell-lang' }, lang), item.number ? h('span', { class: 'muted' }, `cell ${item.number}`) : '', statePill(item), approvalTag(item), dur),
    code,
    outputsElement(item, sessionId, expanded, onExpand) ?? '',
    bar ?? '');
  return det;
}

/// The bar under a call that waits for the analyst: Run (Enter), Edit (the code
/// becomes editable; Run edited, Ctrl+Enter), Reject (Esc; a reason, Enter sends),
/// and "always allow". `answer(a)` sends an answer and resolves when the core took it.
function approveBar(item, codeEl, why, answer) {
  const tool = item.approval.tool || item.name;
  const what = isShell(tool) ? 'shell command' : 'Python cell';
  const b = { code: codeEl, editing: false, sending: false };
  const always = h('input', { type: 'checkbox', class: 'approve-always' });
  const run = h('button', { class: 'primary small approve-run', title: 'Run the call (Enter)' }, 'Run');
  const edit = h('button', { class: 'small approve-edit', title: 'Change the code before it runs' }, 'Edit');
  const reject = h('button', { class: 'small approve-reject', title: 'Do not run it (Esc)' }, 'Reject');
  const keys = h('span', { class: 'muted approve-keys' });
  const status = h('span', { class: 'approve-status' });
  const reason = h('input', { class: 'approve-reason', placeholder: 'Why not? The model reads this (Enter sends; may be left empty)', 'aria-label': 'Reason for the rejection' });
  const send = h('button', { class: 'small danger approve-send' }, 'Reject');
  const back = h('button', { class: 'ghost small approve-back' }, 'Cancel');
  const rejectRow = h('div', { class: 'approve-row approve-reject-row', hidden: true }, reason, send, back);
  const hintKeys = () => {
    clear(keys).append(...(b.editing
      ? [h('kbd', {}, 'Ctrl+Enter'), ' runs the edit · ', h('kbd', {}, 'Esc'), ' undoes it']
      : [h('kbd', {}, 'Enter'), ' runs · ', h('kbd', {}, 'Esc'), ' rejects']));
  };
  b.el = h('div', { class: 'approve-bar', tabindex: '0', role: 'group', 'aria-label': `Approve this ${what}` },
    why ? h('div', { class: 'approve-why' }, h('span', { class: 'muted' }, 'The model: '), why) : '',
    h('div', { class: 'approve-row' },
      h('span', { class: 'approve-q' }, `Run this ${what}?`), run, edit, reject,
      h('label', { class: 'check approve-always-label' }, always, ` always allow ${tool} in this session`),
      h('span', { class: 'spacer' }), status, keys),
    rejectRow);
  hintKeys();

  const setSending = (on, error) => {
    b.sending = on;
    for (const x of [run, edit, reject, send, back, reason, always]) x.disabled = on;
    status.textContent = error ? String(error) : on ? 'Sending…' : '';
    status.classList.toggle('error-text', !!error);
  };
  const decide = async (choice, extra = {}) => {
    if (b.sending) return;
    setSending(true);
    try {
      await answer(answerFor(choice, { ...extra, always: always.checked }));
    } catch (e) {
      setSending(false, e);
      b.el.focus();
    }
  };
  const startEdit = () => {
    if (b.editing) return;
    const area = h('textarea', { class: 'code approve-code', spellcheck: 'false', rows: String(Math.min(20, Math.max(3, item.code.split('\n').length + 1))), 'aria-label': 'The code to run' });
    area.value = item.code;
    area.addEventListener('keydown', (e) => {
      const act = barKey(e, 'code');
      if (!act) return;
      e.preventDefault();
      e.stopPropagation();
      if (act === 'run_edited') runEdited();
      else stopEdit();
    });
    b.code.replaceWith(area);
    b.code = area;
    b.editing = true;
    run.textContent = 'Run edited';
    run.title = 'Run the edited code (Ctrl+Enter)';
    edit.textContent = 'Undo edit';
    hintKeys();
    area.focus();
  };
  const stopEdit = () => {
    if (!b.editing) return;
    b.code.replaceWith(codeEl);
    b.code = codeEl;
    b.editing = false;
    run.textContent = 'Run';
    run.title = 'Run the call (Enter)';
    edit.textContent = 'Edit';
    hintKeys();
    b.el.focus();
  };
  const runEdited = () => {
    const choice = choiceForEdit(item.code, b.code.value);
    if (!choice) { status.textContent = 'An edited call needs code; Reject it instead.'; return; }
    decide(choice, { code: b.code.value });
  };
  const startReject = () => {
    rejectRow.hidden = false;
    reason.focus();
  };
  const stopReject = () => {
    rejectRow.hidden = true;
    reason.value = '';
    b.el.focus();
  };
  run.addEventListener('click', () => (b.editing ? runEdited() : decide('approve')));
  edit.addEventListener('click', () => (b.editing ? stopEdit() : startEdit()));
  reject.addEventListener('click', startReject);
  send.addEventListener('click', () => decide('reject', { reason: reason.value }));
  back.addEventListener('click', stopReject);
  b.el.addEventListener('keydown', (e) => {
    const t = e.target;
    const where = t === reason ? 'reason' : t.tagName === 'BUTTON' ? 'button' : 'bar';
    let act = barKey(e, where);
    if (!act) return;
    e.preventDefault();
    e.stopPropagation();
    if (b.sending) return;
    if (act === 'approve' && b.editing) act = 'run_edited';
    switch (act) {
      case 'approve': decide('approve'); break;
      case 'run_edited': runEdited(); break;
      case 'reject': startReject(); break;
      case 'send_reject': decide('reject', { reason: reason.value }); break;
      case 'cancel_reject': stopReject(); break;
      default: break;
    }
  });
  b.focus = () => {
    b.el.focus({ preventScroll: true });
    b.el.scrollIntoView({ block: 'nearest' });
  };
  return b;
}

/// The cell's output area (streams, figures, traceback, note), or null when empty.
function outputsElement(item, sessionId, expanded, onExpand) {
  const r = item.result;
  const outs = item.outputs.flatMap((o) => (o.stream === 'image'
    ? [h('img', { class: 'cell-image', src: fileUrl(sessionId, o.path), alt: 'figure shown by the cell' })]
    : outputElements(o, expanded, onExpand)));
  if (r?.traceback) outs.push(h('pre', { class: 'out traceback' }, r.traceback));
  // A rejected call's note only repeats the reason, said here in the analyst's words.
  if (item.approval?.state === 'rejected') outs.push(h('div', { class: 'cell-rejected' }, rejectedText(item.approval.answer)));
  else if (r?.note) outs.push(h('div', { class: 'muted cell-note' }, r.note));
  if (item.network?.length) outs.push(networkElement(item.network));
  return outs.length ? h('div', { class: 'outputs' }, ...outs) : null;
}

/// What the call's code reached through the allowlist proxy, and what was refused.
function networkElement(lines) {
  return h('ul', { class: 'cell-network', title: 'Connections through the network allowlist proxy' },
    ...lines.map((l) => h('li', { class: l.allowed ? 'allowed' : 'refused' },
      `${l.allowed ? '✓' : '✗'} ${l.target}${l.count > 1 ? ` (${l.count}×)` : ''}`
      + (l.allowed ? (l.bytes ? ` · ${fmt.bytes(l.bytes)}` : '') : ` refused: ${l.why}`))));
}

/// Where an artifact of the event stream (relative to output/) is inside the session folder.
export function artifactPath(p) {
  return `outputs/${p}`;
}

/// The URL of a file of the session folder, through the app's URI scheme.
export function fileUrl(sessionId, rel) {
  const base = window.sandalystSchemeBase ?? 'sandalyst://localhost/';
  return `${base}${encodeURIComponent(sessionId)}/${String(rel).split('/').map(encodeURIComponent).join('/')}`;
}

/// An artifact card. `load(final)` shows its preview: during the ask the file may
/// not be in the session folder yet (outputs are collected from the sandbox when a
/// step ends), so a failed early load waits for the final one.
function artifactElement(sessionId, a, madeBy) {
  // "made by cell N": the cell that last wrote the file (its provenance), opened on click.
  const maker = madeBy
    ? h('button', { class: 'link made-by', title: 'Show the code that made this file', onclick: () => madeBy.open() }, `made by cell ${madeBy.number}`)
    : '';
  // A file the task asked for that is not what its name says (empty, a PNG that does not decode).
  const invalid = a.invalid ? h('span', { class: 'pill bad invalid', title: `This file ${a.invalid}` }, `invalid: ${a.invalid}`) : '';
  const card = h('div', { class: `artifact${a.invalid ? ' invalid' : ''}`, dataset: { path: a.path } },
    h('div', { class: 'artifact-head' }, h('span', { class: 'artifact-name' }, fmt.baseName(a.path)), h('span', { class: 'muted' }, `${fmt.fileType(a.path)} · ${fmt.bytes(a.bytes)}`), invalid, maker));
  const body = h('div', { class: 'artifact-body muted' }, 'Loading…');
  card.append(body);
  let state = 'idle';
  let wantFinal = false;
  const load = async (final) => {
    if (final) wantFinal = true;
    if (state === 'loading' || state === 'done' || (state === 'waiting' && !final)) return;
    // A file that is not what its name says has nothing to preview; the pill says why.
    if (a.invalid) {
      body.textContent = `No preview: this file ${a.invalid}.`;
      state = 'done';
      return;
    }
    state = 'loading';
    if (final) body.textContent = 'Loading…';
    const el = await previewElement(sessionId, artifactPath(a.path), { height: ['image', 'chart'].includes(fmt.viewOf(a.path)) ? 440 : 300, quiet: !final });
    if (!el) {
      state = 'waiting';
      if (wantFinal) load(true); // the ask ended while this early try was under way
      return;
    }
    clear(body).classList.remove('muted');
    body.append(el);
    state = 'done';
  };
  return { el: card, load };
}

export class AskView {
  /// The cell of this ask that made a file, as `{ number, open() }`, or null.
  madeBy(s, callId) {
    if (!callId) return null;
    const i = s.items.findIndex((it) => it.kind === 'cell' && it.callId === callId);
    if (i < 0) return null;
    return {
      number: s.items[i].number,
      open: () => {
        const el = this.itemEls[i];
        if (!el) return;
        el.open = true;
        el.scrollIntoView({ block: 'center' });
        el.classList.add('flash');
        setTimeout(() => el.classList.remove('flash'), 1200);
      },
    };
  }

  /// `onStop()` stops the ask; `onAnswer(callId, answer)` answers a call that waits
  /// for the analyst (a promise). Without them (an ask of another process, a past
  /// ask) there is no Stop and no approve bar.
  constructor(sessionId, state, { onStop, onAnswer } = {}) {
    this.sessionId = sessionId;
    this.onAnswer = onAnswer ?? null;
    this.bars = new Map(); // call id -> the approve bar of a call that waits
    this.el = h('article', { class: 'ask', dataset: { ask: state.id || '' } });
    this.prompt = h('div', { class: 'user-prompt' }, state.prompt);
    this.stats = h('div', { class: 'ask-stats muted' });
    this.canStop = Boolean(onStop);
    this.stop = h('button', { class: 'danger small', onclick: () => onStop?.(), title: 'Stop (Esc)' }, 'Stop');
    this.head = h('div', { class: 'ask-head' }, this.stats, this.stop);
    this.itemsEl = h('div', { class: 'items' });
    this.notice = h('div', { class: 'notice muted' });
    this.error = h('div', { class: 'error-text' });
    this.artifactsEl = h('div', { class: 'artifacts' });
    this.ending = h('div', { class: 'ending' });
    this.offers = h('div', { class: 'ask-offers' });
    this.el.append(this.prompt, this.head, this.itemsEl, this.notice, this.error, this.artifactsEl, this.ending, this.offers);
    this.itemEls = [];
    this.items = [];
    this.artifactKeys = new Map();
    this.codeEls = new Map(); // cell index -> { code, el }: the highlighted code block
    this.texts = new Map(); // item index -> its AnswerView (Markdown, rendered by the core)
    this.expanded = new Set(); // cell indexes whose outputs are shown whole
    this.state = state;
    this.draw(state);
  }

  /// The element of cell `i`, reusing its code block while the code is the same, and
  /// the approve bar (with its edit box) while the call waits.
  cell(it, i, items) {
    let c = this.codeEls.get(i);
    if (!c || c.code !== it.code) {
      c = { code: it.code, el: codeBlock(it.code) };
      this.codeEls.set(i, c);
    }
    let code = c.el;
    let bar = null;
    if (it.approval?.state === 'pending' && this.onAnswer) {
      bar = this.bars.get(it.callId);
      if (!bar) {
        bar = approveBar(it, c.el, reasonToShow(items, i), (answer) => this.onAnswer(it.callId, answer));
        this.bars.set(it.callId, bar);
        this.fresh = bar;
      }
      code = bar.code;
    } else this.bars.delete(it.callId);
    return cellElement(it, this.sessionId, { code, expanded: this.expanded.has(i), onExpand: () => this.expand(i), bar: bar?.el });
  }

  /// The element of text item `i`: one view per item, updated in place as it streams.
  text(i, it) {
    let v = this.texts.get(i);
    if (!v) {
      v = new AnswerView((text) => invoke('render_markdown', { sessionId: this.sessionId, text }));
      this.texts.set(i, v);
    }
    v.update(it);
    return v.el;
  }

  /// While a cell runs only its output grows: redraw just the output area (keeping
  /// its scroll), not the code and the rest of the cell.
  outputsOnly(i, it) {
    const was = this.items[i];
    const el = this.itemEls[i];
    if (!was || !el || it.kind !== 'cell' || was.kind !== 'cell' || it.callId !== was.callId || it.code !== was.code
      || it.running !== was.running || it.result !== was.result || it.approval !== was.approval
      || it.outputs.some((o) => o.stream === 'image')) return false;
    const prev = el.querySelector('.outputs');
    if (!prev) return false;
    const follow = prev.scrollTop + prev.clientHeight >= prev.scrollHeight - 8;
    const kept = prev.scrollTop;
    const fresh = outputsElement(it, this.sessionId, this.expanded.has(i), () => this.expand(i));
    if (!fresh) return false;
    prev.replaceWith(fresh);
    fresh.scrollTop = follow ? fresh.scrollHeight : kept;
    this.items[i] = it;
    return true;
  }

  expand(i) {
    this.expanded.add(i);
    this.items[i] = null;
    this.draw(this.state);
  }

  draw(s) {
    this.state = s;
    for (let i = 0; i < s.items.length; i++) {
      if (this.items[i] === s.items[i]) continue;
      const it = s.items[i];
      if (this.outputsOnly(i, it)) continue;
      const el = it.kind === 'cell' ? this.cell(it, i, s.items)
        : it.kind === 'note' ? h('p', { class: 'app-note muted' }, it.text) : this.text(i, it);
      if (it.kind === 'cell' && this.itemEls[i]?.tagName === 'DETAILS') el.open = this.itemEls[i].open;
      // Output follows its end, as a terminal does, unless the user scrolled up.
      const prev = this.itemEls[i]?.querySelector('.outputs');
      const follow = !prev || prev.scrollTop + prev.clientHeight >= prev.scrollHeight - 8;
      const kept = prev ? prev.scrollTop : 0;
      if (!this.itemEls[i]) this.itemsEl.append(el); else if (this.itemEls[i] !== el) this.itemEls[i].replaceWith(el);
      const outs = el.querySelector('.outputs');
      if (outs) outs.scrollTop = follow ? outs.scrollHeight : kept;
      this.itemEls[i] = el;
      this.items[i] = it;
    }
    for (const a of s.artifacts) {
      const key = a.version;
      const old = this.artifactKeys.get(a.path);
      if (old && old.key === key) continue;
      const card = artifactElement(this.sessionId, a, this.madeBy(s, a.callId));
      if (old) old.el.replaceWith(card.el); else this.artifactsEl.append(card.el);
      this.artifactKeys.set(a.path, { key, el: card.el, load: card.load });
      if (s.status === 'running') card.load(false);
    }
    if (s.status !== 'running') for (const c of this.artifactKeys.values()) c.load(true);
    // A bar that just appeared takes the focus, unless the person is typing elsewhere.
    if (this.fresh) {
      const bar = this.fresh;
      this.fresh = null;
      if (bar.el.isConnected && mayTakeFocus(document.activeElement)) bar.focus();
    }
    this.notice.textContent = s.notice ?? '';
    this.error.textContent = s.error ?? '';
    // An ask running in another process (a terminal) cannot be stopped from here.
    this.stop.hidden = s.status !== 'running' || !this.canStop;
    this.el.classList.toggle('running', s.status === 'running');
    this.tick();
    if (s.status !== 'running') {
      const text = endingText(s.ending);
      this.ending.textContent = text;
      this.ending.className = `ending ${s.ending === 'finished' || s.ending?.status === 'finished' ? 'ok' : 'bad'}`;
    }
  }

  /// A next step offered under the ending (e.g. "Continue with the model" after a
  /// re-run stopped at a failing cell); offered once per label.
  offer(label, onClick) {
    if ([...this.offers.children].some((b) => b.textContent === label)) return;
    this.offers.append(h('button', { class: 'small', onclick: onClick }, label));
  }

  tick() {
    this.stats.textContent = statsLine(this.state, Date.now(), fmt);
  }
}
