// The session's files: the list (name, size, type, remove, click to preview) and the
// drop overlay. Files arrive as paths from native drag-drop or the dialog; the page
// never reads them.

import { h, clear, $ } from './dom.js';
import * as fmt from './format.js';

export function renderFiles(files, { onPreview, onRemove, busy }) {
  const list = clear($('#file-list'));
  $('#files-hint').textContent = files.length ? '' : 'Drop data files or folders anywhere on the window, or';
  for (const f of files) {
    const li = h('li', { class: 'file', title: `${f.name} · ${fmt.fileType(f.name)} · ${fmt.bytes(f.bytes)}` },
      h('button', { class: 'file-open', onclick: () => onPreview(f) },
        h('span', { class: 'file-name' }, f.name),
        h('span', { class: 'muted' }, `${fmt.fileType(f.name)} · ${fmt.bytes(f.bytes)}`)),
      h('button', { class: 'file-remove ghost', title: `Remove ${f.name} from the session (the original is not touched)`, disabled: busy, onclick: () => onRemove(f) }, '×'));
    list.append(li);
  }
}

export function showDropOverlay(on) {
  $('#drop-overlay').hidden = !on;
}
