// The `?` overlay listing the shortcuts.

import { h, clear, $ } from './dom.js';
import { helpRows } from './shortcuts.js';

// `logsDir`: where the log files are (app_info), shown under the table; `menu`: the
// menu bar's keys (app_info).
export function openHelp(logsDir, menu) {
  $('#logs-dir').textContent = logsDir || 'this system has no folder for logs';
  const t = clear($('#help-table'));
  for (const s of helpRows(menu)) t.append(h('tr', {}, h('td', {}, h('kbd', {}, s.keys)), h('td', {}, s.label)));
  t.append(h('tr', {}, h('td', {}, h('kbd', {}, 'Drag & drop')), h('td', {}, 'Add files or folders from the file manager')));
  $('#help').showModal();
}
