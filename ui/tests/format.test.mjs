import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fmt from '../js/format.js';

test('sizes, durations, tokens and cost read well', () => {
  assert.equal(fmt.bytes(512), '512 B');
  assert.equal(fmt.bytes(41_984), '41.0 KB');
  assert.equal(fmt.bytes(415 * 1024), '415 KB');
  assert.equal(fmt.bytes(3.5 * 1024 ** 3), '3.5 GB');
  assert.equal(fmt.duration(4_200), '4 s');
  assert.equal(fmt.duration(125_000), '2:05');
  assert.equal(fmt.duration(3_725_000), '1:02:05');
  assert.equal(fmt.tokens(950), '950');
  assert.equal(fmt.tokens(12_345), '12k');
  assert.equal(fmt.tokens(2_500), '2.5k');
  assert.equal(fmt.cost(0.004), '<$0.01');
  assert.equal(fmt.cost(1.234), '$1.23');
  assert.equal(fmt.cost(null), '');
});

test('file kinds and views', () => {
  assert.equal(fmt.fileType('a.CSV'), 'CSV table');
  assert.equal(fmt.fileType('noext'), 'File');
  assert.equal(fmt.viewOf('x/energy.png'), 'image');
  assert.equal(fmt.viewOf('r.md'), 'report');
  assert.equal(fmt.viewOf('t.xlsx'), 'table');
  assert.equal(fmt.viewOf('evil.svg'), 'image');
  assert.equal(fmt.viewOf('data.bin'), 'other');
  assert.equal(fmt.viewOf('sales.html'), 'chart', 'an HTML output is an interactive chart, never text or markup');
  assert.equal(fmt.viewOf('x/Sales.HTM'), 'chart');
  assert.equal(fmt.fileType('sales.html'), 'Interactive chart');
  assert.equal(fmt.baseName('/home/a/b.csv'), 'b.csv');
  assert.equal(fmt.baseName('C:\\x\\y.csv'), 'y.csv');
});

test('dates: time today, day and time otherwise', () => {
  const now = new Date(2026, 11, 1, 12, 0);
  assert.equal(fmt.when(new Date(2026, 11, 1, 9, 5).toISOString(), now), '09:05');
  assert.equal(fmt.when(new Date(2026, 10, 28, 17, 30).toISOString(), now), '28 Nov, 17:30');
  assert.equal(fmt.when('not a date', now), '');
});

test('a long output shows its last lines, from a line start, and counts the rest', () => {
  const lines = Array.from({ length: 100_000 }, (_, i) => `line ${i}`);
  const text = lines.join('\n') + '\n';
  const { shown, hiddenLines } = fmt.outputTail(text, 1000);
  assert.ok(shown.length <= 1000);
  assert.ok(shown.startsWith('line '), shown.slice(0, 20));
  assert.ok(shown.endsWith('line 99999\n'));
  const first = Number(shown.split('\n')[0].slice(5));
  assert.equal(hiddenLines, first, 'every line before the first shown one is counted');
  assert.deepEqual(fmt.outputTail('short\n', 1000), { shown: 'short\n', hiddenLines: 0 });
  assert.equal(fmt.SHOW_OUTPUT_CHARS, 40_000);
});

test('long decimals read rounded; short ones, integers and text stay as written', async () => {
  const { readableCell } = await import('../js/format.js');
  assert.deepEqual(readableCell('77.26994791666667'), { text: '77.27', num: true, rounded: true });
  assert.deepEqual(readableCell('-1234.567891'), { text: '-1234.57', num: true, rounded: true });
  assert.equal(readableCell('0.000123456').text, '0.000123');
  assert.equal(readableCell('0.123456').text, '0.123');
  assert.equal(readableCell('0.00000').text, '0.00');
  for (const kept of ['3.1416', '12.5', '2024', '1e-05', 'Tuesday', '', '1,5', '2024-01-05']) {
    assert.equal(readableCell(kept).text, kept, kept);
    assert.equal(readableCell(kept).rounded, false, kept);
  }
  assert.equal(readableCell('2024').num, true);
  assert.equal(readableCell('1e-05').num, true);
  assert.equal(readableCell('Tuesday').num, false);
  assert.equal(readableCell(null).text, '');
});
