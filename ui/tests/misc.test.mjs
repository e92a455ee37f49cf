import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tokenize } from '../js/highlight.js';
import { zoomAt, fit, actual, pan, MAX_SCALE } from '../js/zoom.js';
import { actionFor, helpRows, SHORTCUTS } from '../js/shortcuts.js';
import { AppError } from '../js/errors.js';

test('highlighting keeps every character and marks keywords, strings, comments, numbers', () => {
  const code = "import pandas as pd  # load\ndf = pd.read_csv('input/a.csv')\nprint(len(df) * 2.5)\n";
  const toks = tokenize(code);
  assert.equal(toks.map((t) => t[1]).join(''), code);
  const cls = (text) => toks.find((t) => t[1].includes(text))?.[0];
  assert.equal(cls('import'), 'k');
  assert.equal(cls('# load'), 'c');
  assert.equal(cls("'input/a.csv'"), 's');
  assert.equal(cls('2.5'), 'n');
  assert.equal(cls('print'), 'b');
  assert.equal(tokenize('"unterminated').map((t) => t[1]).join(''), '"unterminated');
});

test('zoom keeps the point under the cursor; fit never enlarges', () => {
  const v = zoomAt({ scale: 1, x: 0, y: 0 }, 2, 100, 50);
  assert.deepEqual(v, { scale: 2, x: -100, y: -50 });
  // The image point under (100, 50) is still (100, 50).
  assert.equal((100 - v.x) / v.scale, 100);
  assert.equal(zoomAt({ scale: MAX_SCALE, x: 0, y: 0 }, 2, 0, 0).scale, MAX_SCALE);
  assert.deepEqual(fit(2000, 1000, 1000, 1000), { scale: 0.5, x: 0, y: 250 });
  assert.equal(fit(100, 100, 1000, 1000).scale, 1);
  assert.deepEqual(actual(100, 100, 300, 200), { scale: 1, x: 100, y: 50 });
  assert.deepEqual(pan({ scale: 1, x: 1, y: 2 }, 3, 4), { scale: 1, x: 4, y: 6 });
});

test('shortcuts: typing in a text field is typing', () => {
  const k = (key, mods = {}) => ({ key, ctrlKey: false, metaKey: false, shiftKey: false, altKey: false, ...mods });
  assert.equal(actionFor(k('Enter', { ctrlKey: true }), true), 'run');
  assert.equal(actionFor(k('Enter'), true), null);
  assert.equal(actionFor(k('Escape'), true), 'stop');
  assert.equal(actionFor(k('?'), false), 'help');
  assert.equal(actionFor(k('?'), true), null);
  assert.equal(actionFor(k('o', { ctrlKey: true }), false), 'add');
  assert.equal(actionFor(k(',', { metaKey: true }), false), 'settings');
  assert.ok(SHORTCUTS.every((s) => s.label && s.keys));
});

test('shortcuts list: the menu bar\'s keys first, then the page\'s own keys no menu item has', () => {
  const menu = [
    { menu: 'File', id: 'new-session', label: 'New session', keys: 'Ctrl+N' },
    { menu: 'View', id: 'toggle-plots', label: 'Plots', keys: 'Ctrl+Shift+P' },
  ];
  const rows = helpRows(menu);
  assert.deepEqual(rows.slice(0, 2), [
    { keys: 'Ctrl+N', label: 'New session (File menu)' },
    { keys: 'Ctrl+Shift+P', label: 'Plots (View menu)' },
  ]);
  // Ctrl+N is listed once; the page's keys that no menu has (Ctrl+Enter, ?) stay.
  assert.equal(rows.filter((r) => r.keys === 'Ctrl+N').length, 1);
  assert.ok(rows.some((r) => r.keys === 'Ctrl+Enter') && rows.some((r) => r.keys === '?'));
  assert.equal(helpRows(undefined).length, SHORTCUTS.length);
});

test('a command refusal keeps its code and reads as its message', () => {
  const e = new AppError({ code: 'session_busy', message: 'session X is in use by sandalyst ask' });
  assert.equal(e.code, 'session_busy');
  assert.equal(String(e), 'session X is in use by sandalyst ask');
  assert.ok(e instanceof Error);
  // A plain string (a refusal from Tauri itself) still reads as itself.
  const s = new AppError('command not found');
  assert.equal(s.code, 'unknown');
  assert.equal(String(s), 'command not found');
});
