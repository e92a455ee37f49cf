import { test } from 'node:test';
import assert from 'node:assert/strict';
// vtable.js imports dom.js, which touches `document` only when called.
import { contentHeight, firstRowAt, scrollTopFor, visibleRange, pagesFor, PageCache, MAX_SCROLL_PX, pageEntry, rowsOf, tsvField, selectionTsv } from '../js/vtable.js';

test('small tables scroll one row per row height', () => {
  assert.equal(contentHeight(100, 26), 2600);
  assert.equal(firstRowAt(0, 260, 26, 100), 0);
  assert.equal(firstRowAt(26 * 10 + 5, 260, 26, 100), 10);
  assert.equal(firstRowAt(99_999, 260, 26, 100), 90, 'clamped to the last full view');
  assert.deepEqual(visibleRange(260, 260, 26, 100, 4), { first: 10, last: 24 });
  assert.deepEqual(visibleRange(0, 260, 26, 5, 4), { first: 0, last: 5 });
});

test('a million rows: the scroll range is compressed and both ends are reachable', () => {
  const total = 1_000_000;
  const rowH = 26;
  const view = 520;
  assert.equal(contentHeight(total, rowH), MAX_SCROLL_PX);
  assert.equal(firstRowAt(0, view, rowH, total), 0);
  const end = MAX_SCROLL_PX - view;
  assert.equal(firstRowAt(end, view, rowH, total), total - view / rowH);
  for (const row of [0, 1, 12_345, 500_000, 999_980]) {
    const top = scrollTopFor(row, view, rowH, total);
    assert.ok(Math.abs(firstRowAt(top, view, rowH, total) - row) <= 1, `row ${row}`);
  }
  const { first, last } = visibleRange(end / 2, view, rowH, total, 8);
  assert.ok(last - first <= view / rowH + 8, 'only the rows in view are rendered');
});

test('pages for a range of rows', () => {
  assert.deepEqual(pagesFor(0, 20, 200), [0]);
  assert.deepEqual(pagesFor(190, 215, 200), [0, 1]);
  assert.deepEqual(pagesFor(400, 400, 200), []);
  assert.deepEqual(pagesFor(999_990, 1_000_000, 200), [4999]);
});

test('the page cache keeps the most recently used pages', () => {
  const c = new PageCache(2);
  c.set(0, ['a']); c.set(1, ['b']);
  c.get(0);
  c.set(2, ['c']);
  assert.ok(c.has(0) && c.has(2) && !c.has(1));
  assert.equal(c.size, 2);
  c.set(5, [['r1000'], ['r1001']]);
  assert.deepEqual(c.row(1001, 200), ['r1001']);
  assert.equal(c.row(1002, 200), undefined, 'past the rows of a short page');
  const d = new PageCache();
  d.set(5, Array.from({ length: 200 }, (_, i) => [`r${1000 + i}`]));
  assert.deepEqual(d.row(1001, 200), ['r1001']);
  assert.equal(d.row(999, 200), undefined);
});

test('a page of a view keeps its rows\' numbers in the file and its formula-like cells', () => {
  const e = pageEntry({ rows: [['=1+1', 'x']], row_numbers: [41], formulas: [[0, 0]], kept_rows: 3, total_rows: 10, offset: 0 });
  assert.deepEqual(e.rowNumbers, [41]);
  assert.ok(e.formulas.has('0:0') && !e.formulas.has('0:1'));
  const c = new PageCache();
  c.set(1, e);
  assert.deepEqual(c.at(200, 200), { entry: e, k: 0 });
  assert.equal(c.at(0, 200), undefined);
  assert.equal(rowsOf({ kept_rows: 3, total_rows: 10 }), 3, 'a view counts what its filters keep');
  assert.equal(rowsOf({ total_rows: 10 }), 10);
  assert.equal(rowsOf({ kept_rows: null, total_rows: null }), null, 'still counting');
  const plain = pageEntry({ rows: [['a']], offset: 0, total_rows: 1 });
  assert.equal(plain.rowNumbers, null);
  assert.equal(plain.formulas.size, 0);
});

test('copied cells are TSV with their columns\' names, quoted where a cell needs it', () => {
  assert.equal(tsvField('plain'), 'plain');
  assert.equal(tsvField('a\tb'), '"a\tb"');
  assert.equal(tsvField('two\nlines'), '"two\nlines"');
  assert.equal(tsvField('say "hi"'), '"say ""hi"""');
  assert.equal(tsvField(null), '');
  const headers = ['city', 'note', 'kWh'];
  // Two rows, the second column and the third selected; the header says which.
  const rows = [[[1, 'ok'], [2, '12.5']], [[1, 'a\tb'], [2, '7']]];
  assert.equal(selectionTsv(headers, rows), 'note\tkWh\nok\t12.5\n"a\tb"\t7');
  // A row with fewer selected cells keeps the columns in place.
  assert.equal(selectionTsv(headers, [[[0, 'Bilbao'], [2, '3']], [[2, '4']]]), 'city\tkWh\nBilbao\t3\n\t4');
});
