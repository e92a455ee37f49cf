import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RenderQueue, codeLanguage } from '../js/markdown.js';
import { collectPlots, madeByText, saveName } from '../js/plotlist.js';
import { newAsk, reduce } from '../js/runstate.js';

// A clock and timers the test moves by hand.
function fakeTime() {
  const t = { now: 0, timers: [] };
  t.later = (f, ms) => t.timers.push({ at: t.now + ms, f });
  t.advance = async (ms) => {
    const end = t.now + ms;
    for (;;) {
      await flush();
      t.timers.sort((a, b) => a.at - b.at);
      const next = t.timers[0];
      if (!next || next.at > end) break;
      t.timers.shift();
      t.now = next.at;
      next.f();
    }
    t.now = end;
    await flush();
  };
  return t;
}
const flush = () => new Promise((r) => setImmediate(r));

test('a streaming reply is rendered at most every 100 ms, one rendering at a time, and its final text always', async () => {
  const t = fakeTime();
  const rendered = [];
  let inFlight = 0;
  let most = 0;
  const q = new RenderQueue(async (text) => {
    const at = t.now;
    inFlight++; most = Math.max(most, inFlight);
    await flush();
    rendered.push({ at, text });
    inFlight--;
  }, { now: () => t.now, later: t.later });
  // 200 deltas, one every 5 ms: a second of streaming.
  let text = '';
  for (let i = 0; i < 200; i++) {
    text += `w${i} `;
    q.want(text);
    await t.advance(5);
  }
  q.want(`${text}done`, true);
  await t.advance(200);
  assert.equal(most, 1, 'never two renderings at once');
  assert.ok(rendered.length <= 12, `${rendered.length} renderings for a second of streaming`);
  assert.ok(rendered.length >= 8, `the text kept being rendered while it streamed (${rendered.length})`);
  for (let i = 1; i < rendered.length - 1; i++) assert.ok(rendered[i].at - rendered[i - 1].at >= 100);
  assert.equal(rendered.at(-1).text, `${text}done`);
  // Nothing new: nothing rendered again.
  q.want(`${text}done`, true);
  await t.advance(500);
  assert.equal(rendered.at(-1).text, `${text}done`);
  assert.equal(rendered.filter((r) => r.text === `${text}done`).length, 1);
});

test('a final text is rendered at once, and a failed rendering does not stop the next', async () => {
  const t = fakeTime();
  const seen = [];
  const q = new RenderQueue(async (text) => { seen.push(text); if (text === 'a') throw new Error('ipc'); }, { now: () => t.now, later: t.later });
  q.want('a', true);
  await flush(); await flush();
  q.want('ab', true);
  await flush(); await flush();
  assert.deepEqual(seen, ['a', 'ab']);
});

test('the language of a rendered code block', () => {
  assert.equal(codeLanguage('language-python'), 'python');
  assert.equal(codeLanguage(''), '');
  assert.equal(codeLanguage('x language-sql'), 'sql');
});

// Two asks as their events make them: ask 1 displays a figure and saves a chart as
// PNG, SVG and PDF; ask 2 saves a chart again and another one with no cell recorded.
function session() {
  let a = newAsk('ask-1', 'Chart by weekday');
  for (const ev of [
    { type: 'tool_call', call_id: 'c1', name: 'python', code: 'plt.show()' },
    { type: 'cell_result', call_id: 'c1', status: 'ok' },
    { type: 'cell_image', call_id: 'c1', path: 'figures/ask-1-c1-1.png' },
    { type: 'tool_call', call_id: 'c2', name: 'python', code: 'savefig' },
    { type: 'cell_result', call_id: 'c2', status: 'ok' },
    { type: 'artifact', call_id: 'c2', path: 'weekday.png', kind: 'image', bytes: 10 },
    { type: 'artifact', call_id: 'c2', path: 'weekday.pdf', kind: 'other', bytes: 12 },
    { type: 'artifact', call_id: 'c2', path: 'weekday.svg', kind: 'image', bytes: 11 },
    { type: 'artifact', call_id: 'c2', path: 'weekday.csv', kind: 'table', bytes: 13 },
    { type: 'artifact', call_id: 'c2', path: 'only.pdf', kind: 'other', bytes: 5 },
  ]) a = reduce(a, ev);
  let b = newAsk('ask-2', 'Again');
  for (const ev of [
    { type: 'tool_call', call_id: 'c1', name: 'python', code: 'savefig' },
    { type: 'cell_result', call_id: 'c1', status: 'ok' },
    { type: 'cell_image', call_id: 'c1', path: 'figures/ask-2-c1-1.png' },
    { type: 'cell_image', call_id: 'c1', path: 'figures/ask-2-c1-2.png' },
    { type: 'artifact', call_id: 'c1', path: 'weekday.png', kind: 'image', bytes: 20 },
    { type: 'artifact', call_id: '', path: 'sub/trend.svg', kind: 'image', bytes: 7 },
  ]) b = reduce(b, ev);
  return [{ id: 'ask-1', state: a }, { id: 'ask-2', state: b }];
}

test('the plots pane lists every image of the session, newest first, with the cell that made it', () => {
  const plots = collectPlots(session());
  assert.deepEqual(plots.map((p) => p.path), [
    'outputs/sub/trend.svg',
    'outputs/weekday.png',
    'figures/ask-2-c1-2.png',
    'figures/ask-2-c1-1.png',
    'figures/ask-1-c1-1.png',
  ]);
  const [trend, weekday, , , first] = plots;
  assert.equal(madeByText(weekday), 'Ask 2 · cell 1', 'a chart saved again is listed once, as its last maker');
  assert.equal(weekday.askId, 'ask-2');
  assert.equal(madeByText(trend), 'Ask 2', 'no cell recorded');
  assert.equal(first.callId, 'c1');
  assert.equal(first.askId, 'ask-1');
  assert.equal(madeByText(first), 'Ask 1 · cell 1');
  assert.equal(trend.png, false);
  assert.equal(new Set(plots.map((p) => p.key)).size, plots.length);
});

test('a saved chart offers the SVG and PDF saved beside it', () => {
  const [ask1] = session();
  const plots = collectPlots([ask1]);
  const weekday = plots.find((p) => p.path === 'outputs/weekday.png');
  assert.deepEqual(weekday.alternates, [
    { format: 'svg', path: 'outputs/weekday.svg' },
    { format: 'pdf', path: 'outputs/weekday.pdf' },
  ]);
  assert.equal(madeByText(weekday), 'Ask 1 · cell 2');
  assert.ok(!plots.some((p) => p.path.endsWith('.svg') || p.path.endsWith('.pdf')), 'alternates and a lone PDF are not plots');
  assert.equal(saveName(weekday), 'weekday.png');
  assert.equal(saveName(weekday, 'svg'), 'weekday.svg');
  assert.deepEqual(plots.map((p) => p.kind), ['file', 'figure'], 'the saved chart of cell 2 is newer than the figure of cell 1');
});

test('an interactive chart is listed beside the images, in the order it was saved', () => {
  let a = newAsk('ask-1', 'An interactive chart');
  for (const ev of [
    { type: 'tool_call', call_id: 'c1', name: 'python', code: 'fig.write_html(...)' },
    { type: 'cell_result', call_id: 'c1', status: 'ok' },
    { type: 'artifact', call_id: 'c1', path: 'sales.png', kind: 'image', bytes: 10 },
    { type: 'artifact', call_id: 'c1', path: 'sales.html', kind: 'report', bytes: 9000000 },
    { type: 'artifact', call_id: 'c1', path: 'notes.txt', kind: 'report', bytes: 9 },
  ]) a = reduce(a, ev);
  const plots = collectPlots([{ id: 'ask-1', state: a }]);
  assert.deepEqual(plots.map((p) => p.path), ['outputs/sales.html', 'outputs/sales.png'], 'newest first; a text file is no chart');
  const [live, still] = plots;
  assert.equal(live.interactive, true);
  assert.equal(live.png, false);
  assert.deepEqual(live.alternates, []);
  assert.equal(madeByText(live), 'Ask 1 · cell 1');
  assert.equal(saveName(live, 'html'), 'sales.html');
  assert.equal(still.interactive, false);
  assert.notEqual(live.key, still.key, 'the chart and the PNG of the same name are two entries');
});
