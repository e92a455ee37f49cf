// Approvals as the page handles them: the modes a session can have, which key does
// what on the approve bar, and the answer each choice sends (`answer_approval`,
// docs/EVENTS.md). Pure; the bar itself is drawn in runview.js.

/// The session modes, in the composer's and the settings' words.
export const MODES = [
  { value: 'auto', short: 'every call runs', long: 'Every call runs: the agent runs its code without asking' },
  { value: 'shell', short: 'ask before shell', long: 'Ask before shell: Python runs, each shell command waits for you' },
  { value: 'all', short: 'ask before every call', long: 'Ask before every call: each Python cell and shell command waits for Run, Edit or Reject' },
];

/// What a rejection without words says to the model.
export const NO_REASON = 'rejected without a reason';

/// The answer of a choice on the bar: `approve`, `edit` (with the edited code) or
/// `reject` (with the typed reason), and whether the tool is always allowed from now.
export function answerFor(choice, { code = '', reason = '', always = false } = {}) {
  const a = choice === 'edit' ? { decision: 'edit', code }
    : choice === 'reject' ? { decision: 'reject', reason: reason.trim() || NO_REASON }
      : { decision: 'approve' };
  // A rejection never allows its tool (the core ignores it there too).
  if (always && choice !== 'reject') a.always = true;
  return a;
}

/// Whether an edit can be sent: it has code, and (a send of the same code is an
/// approval, not an edit) `choiceForEdit` says which.
export function choiceForEdit(original, edited) {
  if (!edited.trim()) return null;
  return edited === original ? 'approve' : 'edit';
}

/// What a key does on the approve bar, by where the focus is: `bar` (the bar itself
/// or its checkbox), `button` (one of its buttons), `code` (the edit box), `reason`
/// (the rejection's input). Null: the key
/// is the field's own (typing), or not the bar's.
export function barKey(e, where) {
  const ctrl = e.ctrlKey || e.metaKey;
  if (where === 'code') {
    if (ctrl && e.key === 'Enter') return 'run_edited';
    if (e.key === 'Escape') return 'cancel_edit';
    return null;
  }
  if (where === 'button') return e.key === 'Escape' ? 'reject' : null; // Enter clicks it
  if (where === 'reason') {
    if (e.key === 'Enter' && !e.shiftKey) return 'send_reject';
    if (e.key === 'Escape') return 'cancel_reject';
    return null;
  }
  if (e.shiftKey || e.altKey || ctrl) return null;
  if (e.key === 'Enter') return 'approve';
  if (e.key === 'Escape') return 'reject';
  return null;
}

/// Whether the bar may take the focus when it appears: not while the person is
/// typing something into a field (the prompt's draft of a follow-up, say).
export function mayTakeFocus(active) {
  if (!active) return true;
  const tag = active.tagName;
  const field = tag === 'TEXTAREA' || tag === 'INPUT' || active.isContentEditable;
  return !field || !String(active.value ?? '').trim();
}

/// The model's reason for a call, unless it is the text drawn just above the cell
/// (the reply's words are already on screen there).
export function reasonToShow(items, i) {
  const reason = String(items[i]?.approval?.reason ?? '').trim();
  if (!reason) return '';
  const before = items[i - 1];
  return before && before.kind === 'text' && before.text.trim() === reason ? '' : reason;
}

/// What a rejected cell says.
export function rejectedText(reason) {
  const r = String(reason ?? '').trim();
  return !r || r === NO_REASON ? 'Rejected without a reason.' : `Rejected: ${r}`;
}
