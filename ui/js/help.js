// The `?` overlay listing the shortcuts.

import { h, clear, $ } from './dom.js';
import { SHORTCUTS } from './shortcuts.js';

export function openHelp() {
  const t = clear($('#help-table'));
  for (const s of SHORTCUTS) t.append(h('tr', {}, h('td', {}, h('kbd', {}, s.keys)), h('td', {}, s.label)));
  t.append(h('tr', {}, h('td', {}, h('kbd', {}, 'Drag & drop')), h('td', {}, 'Add files or folders from the file manager')));
  $('#help').showModal();
}
