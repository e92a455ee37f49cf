import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newAsk, reduce, codeOf, endingText, statsLine, setupText, noticeText, inputNoteText } from '../js/runstate.js';
import * as fmt from '../js/format.js';

const ev = (type, rest = {}) => ({ session_id: 's', ask_id: 'a', at: '2026-12-01T10:00:00.000Z', type, ...rest });

test('a scripted ask reduces to text, a cell with live output, artifacts and an ending', () => {
  const events = [
    ev('ask_started', { prompt: 'p', model: 'offline' }),
    ev('turn_started', { turn: 1, max_turns: 25 }),
    ev('text_delta', { text: 'Let me ' }),
    ev('text_delta', { text: 'look.' }),
    ev('text', { text: 'Let me look.' }),
    ev('tool_call_delta', { call_id: 'c1', name: 'python', arguments: '{"code": "print(\'hi' }),
    ev('tool_call_delta', { call_id: 'c1', name: '', arguments: '\')\\nx = 1"}' }),
    ev('tool_call', { call_id: 'c1', name: 'python', code: "print('hi')\nx = 1" }),
    ev('cell_output', { call_id: 'c1', stream: 'stdout', text: 'h' }),
    ev('cell_output', { call_id: 'c1', stream: 'stdout', text: 'i\n' }),
    ev('cell_output', { call_id: 'c1', stream: 'stderr', text: 'warn\n' }),
    ev('cell_image', { call_id: 'c1', path: 'figures/c1-0.png' }),
    ev('cell_result', { call_id: 'c1', status: 'ok', duration_ms: 1200, stdout: 'hi\n', stderr: 'warn\n', traceback: null, note: null }),
    ev('artifact', { path: 'chart.png', kind: 'image', bytes: 10 }),
    ev('artifact', { path: 'chart.png', kind: 'image', bytes: 20 }),
    ev('usage', { input_tokens: 100, output_tokens: 20, cached_tokens: 0, total_input_tokens: 300, total_output_tokens: 50, cost_usd: 0.02 }),
    ev('ask_finished', { status: { status: 'finished' }, turns: 1, answer: 'Done.', outputs_dir: '/x' }),
  ];
  const s = events.reduce(reduce, newAsk('a', 'p', Date.parse('2026-12-01T09:59:00Z')));
  assert.equal(s.status, 'ended');
  assert.equal(s.turn, 1);
  assert.equal(s.maxTurns, 25);
  const [text, cell, answer] = s.items;
  assert.deepEqual(text, { kind: 'text', text: 'Let me look.', streaming: false });
  assert.equal(cell.code, "print('hi')\nx = 1");
  assert.deepEqual(cell.outputs, [
    { stream: 'stdout', text: 'hi\n' },
    { stream: 'stderr', text: 'warn\n' },
    { stream: 'image', path: 'figures/c1-0.png' },
  ]);
  assert.equal(cell.result.status, 'ok');
  assert.equal(cell.running, false);
  assert.equal(answer.text, 'Done.');
  assert.equal(s.artifacts.length, 1, 'a changed artifact replaces its card');
  assert.equal(s.artifacts[0].bytes, 20);
  assert.equal(s.inputTokens + s.outputTokens, 350);
  assert.equal(s.firstOutputMs, 60000, 'from Run to the first cell_output');
  assert.equal(statsLine(s, 0, fmt), 'turn 1/25 · 1:00 · first output 60.0 s after Run · 350 tokens · $0.02');
});

test('the time from Run to the first output of a cell is kept and said in milliseconds', () => {
  const at = (ms) => new Date(Date.parse('2026-12-01T10:00:00.000Z') + ms).toISOString();
  let s = newAsk('a', 'p', Date.parse('2026-12-01T10:00:00.000Z'));
  s = reduce(s, { ...ev('tool_call', { call_id: 'c1', name: 'python', code: 'print(1)' }), at: at(40) });
  assert.equal(s.firstOutputMs, null, 'no output yet');
  s = reduce(s, { ...ev('cell_output', { call_id: 'c1', stream: 'stdout', text: '1\n' }), at: at(87) });
  s = reduce(s, { ...ev('cell_output', { call_id: 'c1', stream: 'stdout', text: '2\n' }), at: at(400) });
  assert.equal(s.firstOutputMs, 87, 'the first output counts, not the later ones');
  assert.equal(statsLine({ ...s, endedAt: s.startedAt + 500 }, 0, fmt), '0 s · first output 87 ms after Run');
});

test('streamed code is readable before its JSON is complete', () => {
  assert.equal(codeOf('{"code": "import pandas as pd\\ndf = pd.read'), 'import pandas as pd\ndf = pd.read');
  assert.equal(codeOf('{"command": "ls -la"}'), 'ls -la');
  // A step's code as a list of lines, whole and while it streams.
  assert.equal(codeOf('{"thought": "t", "action": "python", "code": ["a = \'x\'", "print(a)"]}'), "a = 'x'\nprint(a)");
  assert.equal(codeOf('{"thought": "t", "action": "python", "code": ["a = 1", "print(a'), 'a = 1\nprint(a');
  assert.equal(codeOf({ code: ['a = 1', 'b = 2'] }), 'a = 1\nb = 2');
  assert.equal(codeOf('not json'), 'not json');
});

test('results without streamed output keep the result text; errors and endings read as sentences', () => {
  let s = newAsk('a', 'p');
  s = reduce(s, ev('tool_call', { call_id: 'c', name: 'python', code: '1/0' }));
  s = reduce(s, ev('cell_result', { call_id: 'c', status: 'error', duration_ms: 5, stdout: '', stderr: 'boom', traceback: 'ZeroDivisionError', note: null }));
  assert.deepEqual(s.items[0].outputs, [{ stream: 'stderr', text: 'boom' }]);
  assert.equal(s.items[0].result.traceback, 'ZeroDivisionError');
  s = reduce(s, ev('error', { error: { code: 'engine_unavailable', message: 'No engine.' } }));
  assert.equal(s.error, 'No engine.');
  assert.equal(s.errorCode, 'engine_unavailable');
  s = reduce(s, ev('ask_finished', { status: { status: 'cancelled' }, turns: 1, answer: null }));
  assert.match(endingText(s.ending), /^Stopped/);
  assert.equal(endingText({ status: 'max_turns', turns: 25 }), 'Stopped at the turn limit (25)');
  assert.equal(setupText({ stage: 'staging', files: 2, bytes: 10 }), 'Staging 2 file(s) into the sandbox…');
  assert.equal(setupText({ stage: 'sandbox_ready', millis: 812 }), 'Sandbox ready (0.8 s).');
  assert.equal(setupText({ stage: 'sandbox_ready', millis: 812, warm_for_ms: 12345 }),
    'Sandbox ready, warm: ready for 12.3 s (its start took 0.8 s).');
  assert.equal(setupText({ stage: 'staged', method: 'bind_mount', files: 1, bytes: 10 }), '1 file(s) mounted read-only (no copy).');
  assert.equal(setupText({ stage: 'staged', method: 'copy', files: 2, bytes: 10, reason: 'added_later' }), '2 file(s) copied into the sandbox.');
  assert.equal(setupText({ stage: 'staged', method: 'copy', files: 1, bytes: 10, reason: 'not_world_readable' }), '1 file(s) copied into the sandbox (the file is not readable by all users).');
});

test('reducing never mutates the previous state', () => {
  const s0 = newAsk('a', 'p');
  const s1 = reduce(s0, ev('text_delta', { text: 'x' }));
  const s2 = reduce(s1, ev('text_delta', { text: 'y' }));
  assert.equal(s0.items.length, 0);
  assert.equal(s1.items[0].text, 'x');
  assert.equal(s2.items[0].text, 'xy');
});

test('cells are numbered in order and an artifact names the cell that made it', () => {
  const events = [
    ev('ask_started', { prompt: 'p', model: 'm' }),
    ev('tool_call', { call_id: 'c1', name: 'python', code: 'a = 1' }),
    ev('cell_result', { call_id: 'c1', status: 'ok', duration_ms: 5, stdout: '', stderr: '', traceback: null, note: null }),
    ev('tool_call', { call_id: 'c2', name: 'shell', code: 'ls' }),
    ev('cell_result', { call_id: 'c2', status: 'ok', duration_ms: 5, stdout: '', stderr: '', traceback: null, note: null }),
    ev('artifact', { call_id: 'c2', path: 'out.csv', kind: 'table', bytes: 3 }),
  ];
  const s = events.reduce(reduce, newAsk('a', 'p', 0));
  const cells = s.items.filter((it) => it.kind === 'cell');
  assert.deepEqual(cells.map((c) => [c.callId, c.number]), [['c1', 1], ['c2', 2]]);
  assert.equal(s.artifacts[0].callId, 'c2');
});

test('egress events fold into one network line per target and fate, with bytes', async () => {
  const { reduce, newAsk } = await import('../js/runstate.js');
  let s = newAsk('ask-1', 'p');
  const ev = (connection) => ({ type: 'egress', call_id: 'c1', connection });
  for (const e of [
    ev({ host: 'pypi.org', port: 443, method: 'connect', event: 'allowed', addr: '151.101.0.223:443' }),
    ev({ host: 'pypi.org', port: 443, method: 'connect', event: 'closed', bytes_up: 100, bytes_down: 900 }),
    ev({ host: 'pypi.org', port: 443, method: 'connect', event: 'allowed', addr: '151.101.0.223:443' }),
    ev({ host: 'evil.test', port: 443, method: 'connect', event: 'refused', reason: { kind: 'not_in_allowlist' } }),
    ev({ host: '169.254.169.254', port: 80, method: 'http', event: 'refused', reason: { kind: 'private_address', addr: '169.254.169.254', range: 'link_local' } }),
  ]) s = reduce(s, e);
  const cell = s.items.find((it) => it.kind === 'cell');
  assert.deepEqual(cell.network, [
    { target: 'pypi.org:443', allowed: true, why: '', count: 2, bytes: 1000 },
    { target: 'evil.test:443', allowed: false, why: 'not in the allowlist', count: 1, bytes: 0 },
    { target: '169.254.169.254:80', allowed: false, why: '169.254.169.254 is a link local address', count: 1, bytes: 0 },
  ]);
});

test('an incomplete ask marks the named files that are wrong and says which', () => {
  let s = newAsk('a', 'p', 0);
  s = reduce(s, ev('artifact', { call_id: 'c1', path: 'chart.png', kind: 'image', bytes: 0 }));
  s = reduce(s, ev('artifact', { call_id: 'c1', path: 'table.csv', kind: 'table', bytes: 20 }));
  s = reduce(s, ev('nothing_ran', { reason: 'your reply holds code but calls no tool, so the code did not run' }));
  const problems = [{ path: 'output/chart.png', problem: 'is empty (0 bytes)' }, { path: 'output/report.md', problem: 'does not exist' }];
  s = reduce(s, ev('ask_finished', { status: { status: 'incomplete', problems }, turns: 5, answer: 'Done.', outputs_dir: '' }));
  assert.equal(s.artifacts.find((a) => a.path === 'chart.png').invalid, 'is empty (0 bytes)');
  assert.equal(s.artifacts.find((a) => a.path === 'table.csv').invalid, undefined);
  assert.equal(endingText(s.ending), 'Incomplete: output/chart.png is empty (0 bytes); output/report.md does not exist');
  assert.deepEqual(s.items[0], { kind: 'note', text: 'Nothing ran: your reply holds code but calls no tool, so the code did not run. The model was told how to call a tool.' });
});

test('outputs that were not brought back stay in the ask as one note, with why', () => {
  let s = newAsk('a', 'p', 0);
  s = reduce(s, ev('outputs_refused', { count: 3, refused: [
    { path: 'link', reason: 'a symbolic link (only regular files are collected)' },
    { path: 'big.bin', reason: 'over the 50 byte limit per file' },
  ] }));
  s = reduce(s, ev('status', { message: 'later' }));
  assert.deepEqual(s.items, [{ kind: 'note', text: 'Not brought back: link (a symbolic link (only regular files are collected)); big.bin (over the 50 byte limit per file); and 1 more.' }]);
});

test('typed notices branch: a condition is a note of the ask, an ask elsewhere its state', () => {
  let s = newAsk('a', 'p', 0);
  s = reduce(s, ev('notice', { notice: 'earlier_outputs_kept', count: 12, paths: ['a.csv', 'b.png'] }));
  s = reduce(s, ev('notice', { notice: 'archive_not_kept', reason: 'no space left on device', disk_full: true }));
  assert.deepEqual(s.items.map((i) => i.notice), ['earlier_outputs_kept', 'archive_not_kept']);
  assert.equal(s.items[0].text, 'Kept 12 earlier output(s) the sandbox no longer had: a.csv, b.png, and 10 more.');
  assert.match(s.items[1].text, /^The disk is full: .*no space left on device$/);
  assert.equal(s.notice ?? null, null);
  s = reduce(s, ev('notice', { notice: 'running_elsewhere' }));
  assert.equal(s.items.length, 2);
  assert.match(s.notice, /running in another process/);
  assert.equal(noticeText({ notice: 'input_changed', name: 'big.csv', bytes: 10 }), 'big.csv changed on your disk during the session; it now has 10 bytes.');
  assert.equal(noticeText({ notice: 'inputs_not_restaged', inputs: [{ name: 'e.csv', original: '/h/e.csv' }] }), 'Could not stage again (the original is gone): e.csv (/h/e.csv).');
});

test('what the loop said as prose is typed: a cut reply, a flood of outputs, a figure not kept', () => {
  let s = newAsk('a', 'p', 0);
  s = reduce(s, ev('notice', { notice: 'reply_cut', what: 'arguments', cap: 4194304 }));
  s = reduce(s, ev('notice', { notice: 'reply_cut', what: 'repetition', cap: 40 }));
  s = reduce(s, ev('notice', { notice: 'more_outputs_changed', count: 3 }));
  s = reduce(s, ev('notice', { notice: 'figure_not_kept', call_id: 'c1', reason: 'disk full' }));
  s = reduce(s, ev('notice', { notice: 'fresh_start', attempt: 2, stale_turns: 6 }));
  assert.deepEqual(s.items.map((i) => i.notice), ['reply_cut', 'reply_cut', 'more_outputs_changed', 'figure_not_kept', 'fresh_start']);
  assert.equal(s.items[0].text, "The model's reply was cut: its tool-call arguments passed 4.0 MB, the most Sandalyst reads of one reply; the rest was not read, and the model was told.");
  assert.equal(s.items[1].text, "The model's reply fell into a loop (the same 40 characters over and over); the rest was not read, and the model was told.");
  assert.equal(s.items[2].text, '3 more files changed in output/; they are collected when the ask ends.');
  assert.equal(s.items[3].text, 'A figure the code drew was not kept (disk full).');
  assert.equal(s.items[4].text, '6 turns wrote none of the missing files, so the model starts afresh (attempt 2) without its earlier cells of this ask in view; the files and the kernel stay.');
});

test('staging notes are typed: the page words a link followed, a link or an entry left out from their fields', () => {
  let s = newAsk('a', 'p', 0);
  s = reduce(s, ev('notice', { notice: 'input_note', kind: 'link_left_out', dest: 'docs/shadow', target: '/etc/shadow', why: 'outside', include: ['add_target', 'follow_links_outside'] }));
  s = reduce(s, ev('notice', { notice: 'input_note', kind: 'link_followed', dest: 'docs/alias.csv', target: '/d/docs/a.csv' }));
  assert.deepEqual(s.items.map((i) => i.notice), ['input_note', 'input_note']);
  assert.equal(s.items[0].text, 'Left out input/docs/shadow: a link to /etc/shadow, outside the dropped folder. To include it, add the target itself, or turn on "Follow links that leave a dropped folder" in Settings.');
  assert.equal(s.items[1].text, 'input/docs/alias.csv is a link to /d/docs/a.csv; followed.');
  // add_files returns the same notes, without the `notice` tag.
  const said = [
    [{ kind: 'link_left_out', dest: 'docs/self', target: '/d/docs', why: 'loop', include: [] }, 'Left out input/docs/self: a link to /d/docs, which leads back to itself (a loop).'],
    [{ kind: 'link_left_out', dest: 'docs/gone.csv', target: '/x/gone.csv', why: 'dangling', include: [] }, 'Left out input/docs/gone.csv: a link to /x/gone.csv, which does not exist.'],
    [{ kind: 'link_left_out', dest: 'docs/env.txt', target: '/d/docs/.env', why: 'hidden_target', include: [] }, 'Left out input/docs/env.txt: a link to /d/docs/.env, a hidden entry of the folder (hidden entries are not staged).'],
    [{ kind: 'link_left_out', dest: 'docs/zero', target: '/dev/zero', why: 'special', target_is: 'char_device', include: [] }, 'Left out input/docs/zero: a link to /dev/zero, which is a character device; only regular files and folders can be staged.'],
    [{ kind: 'entry_left_out', dest: 'docs/pipe', why: 'special', is: 'fifo' }, 'Left out input/docs/pipe: it is a named pipe (FIFO); only regular files and folders can be staged.'],
    [{ kind: 'entry_left_out', dest: 'docs/secret', why: 'unreadable', reason: 'permission denied' }, 'Left out input/docs/secret: it cannot be read (permission denied).'],
    [{ kind: 'hidden_left_out', folder: 'docs', names: ['docs/.a', 'docs/.b', 'docs/.c', 'docs/.d'] }, 'Left out 4 entries of input/docs that are hidden: docs/.a, docs/.b, docs/.c, and 1 more.'],
    [{ kind: 'bad_names_left_out', folder: 'docs', count: 1 }, 'Left out 1 entry of input/docs whose names are not valid UTF-8.'],
    [{ kind: 'more_notes', count: 7 }, '… and 7 more notes about the dropped folders.'],
  ];
  for (const [note, text] of said) assert.equal(inputNoteText(note), text);
});

test('a sandbox that would not close and a recovered workspace are typed notices of the ask', () => {
  let s = newAsk('a', 'p', 0);
  s = reduce(s, ev('notice', { notice: 'workspace_recovered', archive: 'missing', outputs: 1 }));
  s = reduce(s, ev('notice', { notice: 'workspace_recovered', archive: 'unreadable', reason: 'it is cut short', outputs: 3, not_put_back: 'engine gone' }));
  s = reduce(s, ev('notice', { notice: 'workspace_recovered', archive: 'older', outputs: 2 }));
  s = reduce(s, ev('notice', { notice: 'sandbox_not_closed', reason: 'engine gone' }));
  assert.deepEqual(s.items.map((i) => i.notice), ['workspace_recovered', 'workspace_recovered', 'workspace_recovered', 'sandbox_not_closed']);
  assert.equal(s.items[0].text, "The workspace archive was missing: input/ was staged again from your files and output/ put back from the app's copy (1 file). Other files of the workspace are gone.");
  assert.equal(s.items[1].text, 'The workspace archive could not be read (it is cut short): input/ was staged again from your files, but 3 file(s) of output/ could not be put back (engine gone); the app still has them. Other files of the workspace are gone.');
  assert.equal(s.items[2].text, "The workspace came back from an archive older than the last outputs; 2 file(s) of output/ were brought up to date from the app's copy. Other files written since are gone.");
  assert.equal(s.items[3].text, 'The sandbox did not close cleanly (engine gone); a later start removes what is left of it.');
});

test('a limit that left named outputs unmade says which', () => {
  const missing = [{ path: 'output/chart.png', problem: 'does not exist' }];
  assert.equal(endingText({ status: 'time_limit', seconds: 600, missing }), 'Stopped at the time limit; not made: output/chart.png does not exist');
  assert.equal(endingText({ status: 'max_turns', turns: 25 }), 'Stopped at the turn limit (25)');
});

test('the call mode joins the stats line, a switch is a note, and the hidden reply is dropped', () => {
  let s = newAsk('a', 'p', 0);
  s = reduce(s, ev('call_mode', { mode: 'native', reason: 'auto: a local server' }));
  s = reduce(s, ev('turn_started', { turn: 1, max_turns: 25 }));
  s = reduce(s, ev('text_delta', { text: '```python\nprint(1)' }));
  s = reduce(s, ev('retry', { attempt: 2, wait_ms: 0, reason: 'the model wrote its call as text; it is asked again for a structured step' }));
  assert.equal(s.items.length, 0);
  assert.match(s.notice, /asked again/);
  s = reduce(s, ev('call_mode', { mode: 'schema', reason: 'auto: the model wrote a call as text' }));
  assert.equal(s.items.length, 1);
  assert.match(s.items[0].text, /steps held to a JSON schema/);
  assert.equal(statsLine({ ...s, startedAt: 0, endedAt: 1000 }, 0, fmt), 'schema steps · turn 1/25 · 1 s');
  s = reduce(s, ev('inputs_profiled', { tables: 1, duration_ms: 400, failed: null }));
  assert.equal(s.notice, 'Inputs profiled for the model: 1 table(s) in 0.4 s.');
});
