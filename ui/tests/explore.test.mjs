import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as m from '../js/explore_model.js';

test('a header click sorts by that column alone: ascending, descending, then the file order', () => {
  let s = m.toggleSort([], 2);
  assert.deepEqual(s, [{ column: 2, descending: false }]);
  s = m.toggleSort(s, 2);
  assert.deepEqual(s, [{ column: 2, descending: true }]);
  assert.deepEqual(m.toggleSort(s, 2), []);
  assert.deepEqual(m.toggleSort(s, 0), [{ column: 0, descending: false }], 'another column starts ascending, alone');
  const two = [{ column: 0, descending: false }, { column: 1, descending: true }];
  assert.deepEqual(m.toggleSort(two, 1), [{ column: 1, descending: false }], 'a plain click on a multi-key sort starts over');
});

test('Shift+click adds a key, flips it, removes it, and keeps the others in order', () => {
  let s = m.toggleSort([{ column: 3, descending: false }], 1, true);
  assert.deepEqual(s, [{ column: 3, descending: false }, { column: 1, descending: false }]);
  assert.equal(m.sortMark(s, 3), '▲1');
  assert.equal(m.sortMark(s, 1), '▲2');
  assert.equal(m.sortMark(s, 0), '');
  s = m.toggleSort(s, 1, true);
  assert.deepEqual(s, [{ column: 3, descending: false }, { column: 1, descending: true }]);
  assert.equal(m.sortMark(s, 1), '▼2');
  s = m.toggleSort(s, 1, true);
  assert.deepEqual(s, [{ column: 3, descending: false }]);
  assert.equal(m.sortMark(s, 3), '▲', 'one key has no rank');
});

test('one filter per column: replacing, adding and removing', () => {
  let v = m.emptyView();
  v = m.withColumnFilter(v, 2, { op: 'values', values: ['a'] });
  v = m.withColumnFilter(v, 0, { op: 'range', min: '1', max: null });
  v = m.withColumnFilter(v, 2, { op: 'contains', text: 'x' });
  assert.deepEqual(v.filters, [{ op: 'range', min: '1', max: null, column: 0 }, { op: 'contains', text: 'x', column: 2 }]);
  assert.deepEqual(m.filterOf(v, 2), { op: 'contains', text: 'x', column: 2 });
  v = m.withColumnFilter(v, 0, null);
  assert.deepEqual(v.filters.map((f) => f.column), [2]);
  assert.equal(m.filterOf(v, 0), null);
});

test('filters read as sentences on their chips', () => {
  const hd = ['region', 'units', 'date'];
  assert.equal(m.filterText({ column: 0, op: 'values', values: ['Centro', 'Norte'] }, hd), 'region is Centro or Norte');
  assert.equal(m.filterText({ column: 0, op: 'values', values: ['Centro'] }, hd), 'region is Centro');
  assert.equal(m.filterText({ column: 0, op: 'values', values: ['a', 'b', 'c', 'd', ''] }, hd), 'region is one of 5 values (a, b, c, …)');
  assert.equal(m.filterText({ column: 0, op: 'values', values: [''] }, hd), 'region is (missing)');
  assert.equal(m.filterText({ column: 1, op: 'range', min: '10', max: '20' }, hd), 'units 10 – 20');
  assert.equal(m.filterText({ column: 1, op: 'range', min: '10', max: null }, hd), 'units ≥ 10');
  assert.equal(m.filterText({ column: 2, op: 'range', min: null, max: '2024-01-31' }, hd), 'date ≤ 2024-01-31');
  assert.equal(m.filterText({ column: 0, op: 'contains', text: 'tr' }, hd), 'region contains “tr”');
  assert.equal(m.filterText({ column: 1, op: 'missing' }, hd), 'units is missing');
  assert.equal(m.filterText({ column: 1, op: 'not_missing' }, hd), 'units is not missing');
});

test('the share of rows kept reads at every scale', () => {
  assert.equal(m.keptText(1234, 1_000_000, true), '1,234 of 1,000,000 rows (0.12%)');
  assert.equal(m.keptText(500, 1000, true), '500 of 1,000 rows (50.0%)');
  assert.equal(m.keptText(1000, 1000, false), '1,000 rows');
  assert.equal(m.keptText(null, null, true), 'counting rows…');
  assert.equal(m.share(0, 10), '0%');
  assert.equal(m.share(10, 10), '100%');
  assert.equal(m.share(1, 1_000_000), '<0.01%');
  assert.equal(m.share(999_999, 1_000_000), '>99.9%');
  assert.equal(m.share(1, 0), '0%');
});

test('histogram bars scale to the tallest bin and never hide a non-empty one', () => {
  const bars = m.histogramBars([{ lo: 0, hi: 1, count: 100 }, { lo: 1, hi: 2, count: 0 }, { lo: 2, hi: 3, count: 1 }], 30, 20);
  assert.equal(bars.length, 3);
  assert.equal(bars[0].h, 20);
  assert.equal(bars[0].y, 0);
  assert.equal(bars[1].h, 0);
  assert.equal(bars[2].h, 1, 'one row in a bin of a big column is still 1 px tall');
  assert.equal(bars[2].x, 20);
  assert.deepEqual(m.histogramBars([], 30, 20), []);
  const f = m.frequencyBars([{ value: 'a', count: 6 }, { value: 'b', count: 3 }], 10);
  assert.deepEqual(f.map((b) => [b.share, b.width]), [[0.6, 1], [0.3, 0.5]]);
});

test('a column panel starts from its filter, or the natural one for its kind; an empty form clears it', () => {
  assert.deepEqual(m.defaultFilter('number', null), { op: 'range', min: null, max: null });
  assert.deepEqual(m.defaultFilter('date', null), { op: 'range', min: null, max: null });
  assert.deepEqual(m.defaultFilter('text', null), { op: 'values', values: [] });
  const cur = { op: 'contains', text: 'x', column: 1 };
  assert.equal(m.defaultFilter('text', cur), cur);
  assert.equal(m.formFilter('values', { values: [] }), null);
  assert.deepEqual(m.formFilter('values', { values: ['a', ''] }), { op: 'values', values: ['a', ''] });
  assert.equal(m.formFilter('range', { min: ' ', max: '' }), null);
  assert.deepEqual(m.formFilter('range', { min: ' 3 ', max: '' }), { op: 'range', min: '3', max: null });
  assert.equal(m.formFilter('contains', { text: '' }), null);
  assert.deepEqual(m.formFilter('missing'), { op: 'missing' });
});

test('"Ask about this view" puts the sentence and a fenced pandas block in the ask box', () => {
  const t = m.askText({ sentence: 'Rows of input/a.csv where x is 1: 3 of 9 rows.', pandas: 'import pandas as pd\nview = df\n' });
  assert.equal(t, 'Rows of input/a.csv where x is 1: 3 of 9 rows.\n\n```python\nimport pandas as pd\nview = df\n```\n\n');
});

test('a column summary line says distinct values, estimated or exact, and the missing share', () => {
  assert.equal(m.profileLine({ distinct: 57, distinct_exact: true, missing: 0, count: 100 }), '57 distinct');
  assert.equal(m.profileLine({ distinct: 1_200_000, distinct_exact: false, missing: 25, count: 75 }), '≈1,200,000 distinct · 25.0% missing');
});

test('Save view as proposes the file\'s name in the chosen format, marked _view when filtered or sorted', () => {
  const none = { filters: [], sort: [] };
  const csv = m.saveTarget('outputs/sub/orders.csv', none, 'csv');
  assert.deepEqual(csv, { name: 'orders.csv', filters: [{ name: 'CSV table', extensions: ['csv'] }], format: 'csv' });
  const sorted = { filters: [], sort: [{ column: 1, descending: true }] };
  const pq = m.saveTarget('orders.tar.json', sorted, 'parquet');
  assert.deepEqual(pq, { name: 'orders.tar_view.parquet', filters: [{ name: 'Parquet table', extensions: ['parquet'] }], format: 'parquet' });
  const filtered = { filters: [{ column: 0, op: 'values', values: ['a'] }], sort: [] };
  assert.equal(m.saveTarget('C:\\data\\x.xlsx', filtered, 'parquet').name, 'x_view.parquet');
  assert.throws(() => m.saveTarget('x.csv', none, 'xlsx'), /no format xlsx/);
});
