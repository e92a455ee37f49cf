import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newAsk, reduce, pendingCell } from '../js/runstate.js';
import { MODES, NO_REASON, answerFor, barKey, choiceForEdit, mayTakeFocus, reasonToShow, rejectedText } from '../js/approval.js';

const ev = (type, rest = {}) => ({ session_id: 's', ask_id: 'a', at: '2026-12-01T10:00:00.000Z', type, ...rest });
const cells = (s) => s.items.filter((it) => it.kind === 'cell');

// The events of one ask under `all`, in the core's order (docs/EVENTS.md): an approved
// call, an edited one, a rejected one, the answer.
const turn = (callId, tool, code, resolution, extra = {}) => [
  ev('tool_call_delta', { call_id: callId, name: tool, arguments: JSON.stringify(tool === 'shell' ? { command: code } : { code }) }),
  ev('approval_requested', { call_id: callId, tool, code, reason: extra.why ?? '' }),
  ev('approval_resolved', { call_id: callId, resolution, reason: extra.reason ?? null, always: !!extra.always }),
  ...(resolution === 'rejected' ? [] : [ev('tool_call', { call_id: callId, name: tool, code: extra.ran ?? code })]),
  ...(resolution === 'rejected' ? [] : [ev('cell_output', { call_id: callId, stream: 'stdout', text: `${extra.out}\n` })]),
  ev('cell_result', resolution === 'rejected'
    ? { call_id: callId, status: null, duration_ms: 0, stdout: '', stderr: '', traceback: null, note: `Not run: the analyst rejected this call. Their reason: ${extra.reason}` }
    : { call_id: callId, status: 'ok', duration_ms: 20, stdout: `${extra.out}\n`, stderr: '', traceback: null, note: null }),
];

test('a call that waits is one pending cell, and goes on as that cell once answered', () => {
  let s = newAsk('a', 'p');
  s = reduce(s, ev('text', { text: 'I will print one.' }));
  s = reduce(s, ev('tool_call_delta', { call_id: 'c1', name: 'python', arguments: '{"code": "print(\'one\')"}' }));
  s = reduce(s, ev('approval_requested', { call_id: 'c1', tool: 'python', code: "print('one')", reason: 'I will print one.' }));
  assert.equal(cells(s).length, 1, 'the streamed call and the request share a cell');
  assert.equal(pendingCell(s), 1);
  assert.equal(pendingCell(s, 'c1'), 1);
  assert.equal(pendingCell(s, 'other'), -1);
  const waiting = s.items[1];
  assert.equal(waiting.running, false, 'a waiting call is not running');
  assert.deepEqual(waiting.approval, { state: 'pending', tool: 'python', reason: 'I will print one.', answer: null, always: false });
  // The reason is the reply's text, drawn just above: not said twice.
  assert.equal(reasonToShow(s.items, 1), '');

  s = reduce(s, ev('approval_resolved', { call_id: 'c1', resolution: 'approved', reason: null, always: true }));
  assert.equal(pendingCell(s), -1);
  assert.equal(s.items[1].running, true);
  assert.equal(s.items[1].approval.always, true);
  s = reduce(s, ev('tool_call', { call_id: 'c1', name: 'python', code: "print('one')" }));
  assert.equal(cells(s).length, 1, 'the tool_call reuses the pending cell');
});

test('approved, edited and rejected calls read as the analyst decided', () => {
  const events = [
    ev('ask_started', { prompt: 'p', model: 'm' }),
    ...turn('c1', 'python', "print('one')", 'approved', { out: 'one' }),
    ...turn('c2', 'python', "print('two')", 'edited', { ran: "print('edited')", out: 'edited' }),
    ...turn('c3', 'shell', 'rm -rf output', 'rejected', { reason: 'keep the outputs', why: 'Clean up first.' }),
    ev('ask_finished', { status: { status: 'finished' }, turns: 4, answer: 'Done.', outputs_dir: '' }),
  ];
  const s = events.reduce(reduce, newAsk('a', 'p'));
  const [one, two, three] = cells(s);
  assert.equal(cells(s).length, 3);
  assert.deepEqual([one.number, two.number, three.number], [1, 2, 3]);
  assert.equal(one.approval.state, 'approved');
  assert.equal(two.approval.state, 'edited');
  assert.equal(two.code, "print('edited')", 'the edit is the code the cell shows');
  assert.deepEqual(two.outputs, [{ stream: 'stdout', text: 'edited\n' }]);
  assert.equal(three.approval.state, 'rejected');
  assert.equal(three.approval.answer, 'keep the outputs');
  assert.equal(three.running, false);
  assert.equal(three.result.status, 'not_run');
  assert.equal(three.code, 'rm -rf output');
  assert.equal(reasonToShow(s.items, s.items.indexOf(three)), 'Clean up first.', 'a reason not drawn above is shown');
  assert.equal(rejectedText(three.approval.answer), 'Rejected: keep the outputs');
  assert.equal(rejectedText(NO_REASON), 'Rejected without a reason.');
  assert.ok(s.items.every((it) => !it.running));
});

test('a call still waiting when the ask ends is not left pending', () => {
  let s = newAsk('a', 'p');
  s = reduce(s, ev('approval_requested', { call_id: 'c1', tool: 'shell', code: 'ls', reason: '' }));
  s = reduce(s, ev('ask_finished', { status: { status: 'cancelled' }, turns: 1, answer: null, outputs_dir: '' }));
  assert.equal(s.items[0].approval.state, 'withdrawn');
  assert.equal(pendingCell(s), -1);
});

test('a past ask draws without approval events', () => {
  // What SessionView.asks holds for a session that had approvals: no approval_* events.
  const events = [
    ev('ask_started', { prompt: 'p', model: 'm' }),
    ev('tool_call', { call_id: 'c3', name: 'shell', code: 'rm -rf output' }),
    ev('cell_result', { call_id: 'c3', status: null, duration_ms: 0, stdout: '', stderr: 'Not run: the analyst rejected this call. Their reason: keep the outputs', traceback: null, note: null }),
    ev('ask_finished', { status: { status: 'finished' }, turns: 2, answer: null, outputs_dir: '' }),
  ];
  const s = events.reduce(reduce, newAsk('a', 'p'));
  const [cell] = cells(s);
  assert.equal(cell.approval, undefined);
  assert.equal(cell.running, false);
  assert.match(cell.outputs[0].text, /keep the outputs/);
  // With the decision that run.json kept (after the call, in a past ask), the cell
  // reads as it did live.
  const kept = [...events.slice(0, 2), ev('approval_resolved', { call_id: 'c3', resolution: 'rejected', reason: 'keep the outputs', always: false }), ...events.slice(2)];
  const again = cells(kept.reduce(reduce, newAsk('a', 'p')))[0];
  assert.equal(again.approval.state, 'rejected');
  assert.equal(again.approval.answer, 'keep the outputs');
  assert.deepEqual(again.outputs, [], 'the refusal sent to the model is not drawn as output');
  assert.equal(again.running, false);
});

test('each choice on the bar sends the answer the core takes', () => {
  assert.deepEqual(answerFor('approve'), { decision: 'approve' });
  assert.deepEqual(answerFor('approve', { always: true }), { decision: 'approve', always: true });
  assert.deepEqual(answerFor('edit', { code: "print('edited')" }), { decision: 'edit', code: "print('edited')" });
  assert.deepEqual(answerFor('reject', { reason: '  keep the outputs ' }), { decision: 'reject', reason: 'keep the outputs' });
  assert.deepEqual(answerFor('reject', { reason: '' }), { decision: 'reject', reason: 'rejected without a reason' });
  assert.deepEqual(answerFor('reject', { reason: 'no', always: true }), { decision: 'reject', reason: 'no' }, 'a rejection never allows its tool');
  // An edit that changed nothing is an approval; an empty one cannot be sent.
  assert.equal(choiceForEdit('a', 'b'), 'edit');
  assert.equal(choiceForEdit('a', 'a'), 'approve');
  assert.equal(choiceForEdit('a', '  \n'), null);
});

test('keys on the bar: Enter runs, Esc rejects; in its fields they are the fields\'', () => {
  const k = (key, mods = {}) => ({ key, ctrlKey: false, metaKey: false, shiftKey: false, altKey: false, ...mods });
  assert.equal(barKey(k('Enter'), 'bar'), 'approve');
  assert.equal(barKey(k('Escape'), 'bar'), 'reject');
  assert.equal(barKey(k('Enter', { ctrlKey: true }), 'bar'), null, 'Ctrl+Enter stays the prompt\'s');
  assert.equal(barKey(k('a'), 'bar'), null);
  assert.equal(barKey(k('Enter'), 'button'), null, 'Enter on a button clicks that button');
  assert.equal(barKey(k('Escape'), 'button'), 'reject');
  assert.equal(barKey(k('Enter'), 'code'), null, 'Enter in the edit box is a new line');
  assert.equal(barKey(k('Enter', { ctrlKey: true }), 'code'), 'run_edited');
  assert.equal(barKey(k('Escape'), 'code'), 'cancel_edit');
  assert.equal(barKey(k('Enter'), 'reason'), 'send_reject');
  assert.equal(barKey(k('Escape'), 'reason'), 'cancel_reject');
  assert.equal(barKey(k('x'), 'reason'), null);
});

test('the bar takes the focus unless the person is typing into a field', () => {
  assert.equal(mayTakeFocus(null), true);
  assert.equal(mayTakeFocus({ tagName: 'BODY' }), true);
  assert.equal(mayTakeFocus({ tagName: 'BUTTON' }), true);
  assert.equal(mayTakeFocus({ tagName: 'TEXTAREA', value: '' }), true, 'the prompt, emptied by the ask');
  assert.equal(mayTakeFocus({ tagName: 'TEXTAREA', value: 'Now split it by' }), false, 'a follow-up being typed');
  assert.equal(mayTakeFocus({ tagName: 'INPUT', value: 'x' }), false);
});

test('the modes are the core\'s, each with words for the composer and the settings', () => {
  assert.deepEqual(MODES.map((m) => m.value), ['auto', 'shell', 'all']);
  assert.ok(MODES.every((m) => m.short && m.long));
});
