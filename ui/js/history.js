// The sessions sidebar: reopen, rename (inline), delete (after a confirmation).

import { h, clear, $ } from './dom.js';
import { when } from './format.js';

export function renderHistory(sessions, currentId, { onOpen, onRename, onDelete }) {
  const ul = clear($('#history'));
  if (!sessions.length) {
    ul.append(h('li', { class: 'muted history-empty' }, 'Sessions you start appear here.'));
    return;
  }
  for (const s of sessions) {
    const title = h('span', { class: 'h-title' }, s.title || 'Untitled session');
    // A folder that cannot be read is listed with why, not hidden.
    const meta = h('span', { class: 'h-meta muted' }, s.unreadable ? `unreadable: ${s.unreadable}` : [when(s.created), statusWord(s.status), s.asks > 1 ? `${s.asks} asks` : ''].filter(Boolean).join(' · '));
    const open = h('button', { class: 'h-open', onclick: () => onOpen(s.id), title: s.title || '' }, title, meta);
    const rename = h('button', { class: 'ghost h-act h-rename-btn', title: 'Rename', 'aria-label': 'Rename', onclick: (e) => { e.stopPropagation(); startRename(li, s, onRename); } }, '✎');
    const del = h('button', { class: 'ghost h-act h-delete-btn', title: 'Delete', 'aria-label': 'Delete', onclick: (e) => { e.stopPropagation(); onDelete(s); } }, '✕');
    const li = h('li', { class: `h-item${s.id === currentId ? ' current' : ''}`, dataset: { id: s.id } }, open, h('div', { class: 'h-actions' }, rename, del));
    ul.append(li);
  }
}

/// A session's last status in a word for the list.
export function statusWord(st) {
  const k = typeof st === 'string' ? st : st?.status;
  return { finished: '', cancelled: 'stopped', failed: 'failed', interrupted: 'interrupted', max_turns: 'turn limit', time_limit: 'time limit', cost_limit: 'cost limit', incomplete: 'incomplete' }[k] ?? '';
}

function startRename(li, s, onRename) {
  const input = h('input', { class: 'h-rename', value: s.title || '' });
  const done = (save) => { if (save && input.value.trim()) onRename(s.id, input.value.trim()); else li.replaceWith(li); input.replaceWith(li.firstChild); };
  const open = li.firstChild;
  open.replaceWith(input);
  input.focus();
  input.select();
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter') { e.preventDefault(); onRename(s.id, input.value.trim() || s.title); }
    if (e.key === 'Escape') { e.stopPropagation(); input.replaceWith(open); }
  });
  input.addEventListener('blur', () => { if (input.isConnected) input.replaceWith(open); });
  void done;
}

/// Ask before something irreversible; resolves to true or false.
export function confirmDialog(text, yes = 'Delete') {
  const d = $('#confirm');
  $('#confirm-text').textContent = text;
  $('#confirm-yes').textContent = yes;
  return new Promise((resolve) => {
    const finish = (v) => { d.close(); $('#confirm-yes').onclick = null; $('#confirm-no').onclick = null; resolve(v); };
    $('#confirm-yes').onclick = () => finish(true);
    $('#confirm-no').onclick = () => finish(false);
    d.oncancel = () => resolve(false);
    d.showModal();
  });
}
