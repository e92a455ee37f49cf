// The keyboard shortcuts, listed once for the help overlay and the key handler. Pure.

export const SHORTCUTS = [
  { keys: 'Ctrl+Enter', action: 'run', label: 'Run the request (or the follow-up)' },
  { keys: 'Escape', action: 'stop', label: 'Stop the running ask; close a preview or dialog' },
  { keys: 'Ctrl+O', action: 'add', label: 'Add files' },
  { keys: 'Ctrl+N', action: 'new', label: 'New session' },
  { keys: 'Ctrl+E', action: 'export', label: 'Export the outputs' },
  { keys: 'Ctrl+,', action: 'settings', label: 'Settings' },
  { keys: 'Ctrl+L', action: 'focus', label: 'Focus the request box' },
  { keys: '?', action: 'help', label: 'This list' },
  // On the approve bar of a call that waits for you (approval.js's barKey).
  { keys: 'Enter', action: 'approve', label: 'On the approve bar: run the call that waits' },
  { keys: 'Escape', action: 'reject', label: 'On the approve bar: reject it (type a reason, Enter sends)' },
  { keys: 'Ctrl+Enter', action: 'run_edited', label: 'Editing a call that waits: run the edited code' },
];

/// The Shortcuts list: the menu bar's keys (`menu`: app_info's, as the platform
/// writes them), then the page's own keys that no menu item has.
export function helpRows(menu = []) {
  const rows = menu.map((m) => ({ keys: m.keys, label: `${m.label} (${m.menu} menu)` }));
  const taken = new Set(rows.map((r) => r.keys));
  for (const s of SHORTCUTS) if (!taken.has(s.keys)) rows.push({ keys: s.keys, label: s.label });
  return rows;
}

/// The action of a keydown, or null. `inText`: focus is in a text field, where
/// plain keys (like `?`) are typing, not shortcuts.
export function actionFor(e, inText) {
  const ctrl = e.ctrlKey || e.metaKey;
  if (ctrl && e.key === 'Enter') return 'run';
  if (e.key === 'Escape') return 'stop';
  if (ctrl && !e.shiftKey && !e.altKey) {
    const k = e.key.toLowerCase();
    if (k === 'o') return 'add';
    if (k === 'n') return 'new';
    if (k === 'e') return 'export';
    if (k === ',') return 'settings';
    if (k === 'l') return 'focus';
  }
  if (!ctrl && !inText && e.key === '?') return 'help';
  return null;
}
