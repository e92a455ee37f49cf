// What an ask looks like on screen, reduced from its events. Pure: reduce(state, event)
// returns the new state; the run view draws it. Event shapes are those of the core's
// session events (docs/EVENTS.md): {type, session_id, ask_id, at, ...}.

import { bytes } from './format.js';

export function newAsk(askId, prompt, startedAt = Date.now()) {
  return {
    id: askId, prompt, status: 'running', ending: null, turn: 0, maxTurns: null,
    startedAt, endedAt: null, firstOutputMs: null, inputTokens: 0, outputTokens: 0, cost: null,
    items: [], artifacts: [], notice: null, error: null,
  };
}

function last(items, pred) {
  for (let i = items.length - 1; i >= 0; i--) if (pred(items[i])) return i;
  return -1;
}

function cellIndex(items, callId) {
  return last(items, (it) => it.kind === 'cell' && it.callId === callId);
}

function ensureCell(items, callId, name) {
  let i = cellIndex(items, callId);
  if (i < 0) {
    const number = items.filter((it) => it.kind === 'cell').length + 1;
    items.push({ kind: 'cell', callId, number, name: name || 'python', code: '', outputs: [], result: null, running: true });
    i = items.length - 1;
  }
  return i;
}

/// Parse the arguments of a tool call into its code: `{"code": ...}` or `{"command": ...}`;
/// a step's code may come as a list of lines (`{"code": ["a = 1", "print(a)"]}`).
export function codeOf(args) {
  if (args == null) return '';
  const whole = (v) => (Array.isArray(v) ? v.join('\n') : v);
  if (typeof args === 'object') return whole(args.code) ?? args.command ?? JSON.stringify(args);
  try {
    const v = JSON.parse(args);
    if (v && typeof v === 'object') return whole(v.code) ?? v.command ?? String(args);
  } catch { /* partial JSON while streaming */ }
  // Lines streaming in: the strings of the list so far, the last one perhaps cut.
  const list = /"code"\s*:\s*\[((?:\s*,?\s*"(?:[^"\\]|\\.)*"?)*)/.exec(args);
  if (list) {
    const lines = [...list[1].matchAll(/"((?:[^"\\]|\\.)*)"?/g)].map((x) => {
      try { return JSON.parse(`"${x[1].replace(/\\$/, '')}"`); } catch { return x[1]; }
    });
    return lines.join('\n');
  }
  const m = /"(?:code|command)"\s*:\s*"((?:[^"\\]|\\.)*)/.exec(args);
  if (m) {
    try { return JSON.parse(`"${m[1].replace(/\\$/, '')}"`); } catch { return m[1]; }
  }
  return String(args);
}

/// A cell's network lines with one more connection event folded in.
export function addConnection(lines, c) {
  const target = !c.host ? 'a request it could not read' : (c.host.includes(':') ? `[${c.host}]:${c.port}` : `${c.host}:${c.port}`);
  const out = lines.slice();
  if (c.event === 'closed') {
    const k = last(out, (l) => l.target === target && l.allowed);
    if (k >= 0) out[k] = { ...out[k], bytes: (out[k].bytes ?? 0) + (c.bytes_up ?? 0) + (c.bytes_down ?? 0) };
    return out;
  }
  const allowed = c.event === 'allowed';
  const why = allowed ? '' : refusalText(c.reason);
  const k = out.findIndex((l) => l.target === target && l.allowed === allowed && l.why === why);
  if (k >= 0) out[k] = { ...out[k], count: out[k].count + 1 };
  else out.push({ target, allowed, why, count: 1, bytes: 0 });
  return out;
}

/// Why the proxy refused, in a few words.
export function refusalText(r) {
  switch (r?.kind) {
    case 'not_in_allowlist': return 'not in the allowlist';
    case 'private_address': return `${r.addr} is a ${String(r.range ?? 'private').replace(/_/g, ' ')} address`;
    case 'resolve_failed': return 'the name did not resolve';
    case 'unreachable': return 'could not connect';
    case 'connect_timeout': return 'no answer in time';
    case 'bad_request': return 'a request the proxy does not speak';
    case 'head_too_large': return 'request head too large';
    case 'too_many_connections': return 'too many connections at once';
    default: return 'refused';
  }
}

/// "; not made: output/a.png does not exist" for a limit that left named outputs unmade.
function notMade(status) {
  const m = status?.missing ?? [];
  return m.length ? `; not made: ${m.map((p) => `${p.path} ${p.problem}`).join('; ')}` : '';
}

export function endingText(status) {
  const s = typeof status === 'string' ? status : status?.status;
  switch (s) {
    case 'finished': return 'Finished';
    case 'cancelled': return 'Stopped: the model was stopped and the code interrupted.';
    case 'max_turns': return `Stopped at the turn limit${status?.turns ? ` (${status.turns})` : ''}${notMade(status)}`;
    case 'time_limit': return `Stopped at the time limit${notMade(status)}`;
    case 'cost_limit': return `Stopped at the cost limit${notMade(status)}`;
    case 'failed': return `Failed: ${status?.message ?? 'see the error above'}`;
    case 'interrupted': return 'Interrupted (the app stopped during the ask)';
    case 'incomplete': return `Incomplete: ${(status?.problems ?? []).map((p) => `${p.path} ${p.problem}`).join('; ') || 'a file the task asked for is missing'}`;
    default: return s ? String(s) : 'Ended';
  }
}

/// The cell of `callId` waiting for the analyst, as its index, or -1.
export function pendingCell(state, callId) {
  return state.items.findIndex((it) => it.kind === 'cell' && it.approval?.state === 'pending' && (callId == null || it.callId === callId));
}

/// Apply one event. Returns a new state object (items are copied shallowly).
export function reduce(state, ev) {
  const s = { ...state, items: state.items.slice(), artifacts: state.artifacts.slice() };
  const items = s.items;
  switch (ev.type) {
    case 'ask_started':
      if (ev.prompt && !s.prompt) s.prompt = ev.prompt;
      if (ev.max_turns) s.maxTurns = ev.max_turns;
      break;
    case 'turn_started':
      s.turn = ev.turn ?? s.turn + 1;
      if (ev.max_turns) s.maxTurns = ev.max_turns;
      break;
    case 'text_delta': {
      const i = items.length - 1;
      if (i >= 0 && items[i].kind === 'text' && items[i].streaming) items[i] = { ...items[i], text: items[i].text + (ev.text ?? ev.delta ?? '') };
      else items.push({ kind: 'text', text: ev.text ?? ev.delta ?? '', streaming: true });
      break;
    }
    case 'text': {
      const i = last(items, (it) => it.kind === 'text' && it.streaming);
      if (i >= 0) items[i] = { kind: 'text', text: ev.text, streaming: false };
      else items.push({ kind: 'text', text: ev.text, streaming: false });
      break;
    }
    case 'tool_call_delta': {
      const i = ensureCell(items, ev.call_id, ev.name);
      const raw = (items[i].raw ?? '') + (ev.arguments ?? ev.delta ?? '');
      items[i] = { ...items[i], raw, code: codeOf(raw), name: ev.name || items[i].name };
      break;
    }
    case 'tool_call': {
      const i = ensureCell(items, ev.call_id, ev.name);
      items[i] = { ...items[i], name: ev.name ?? items[i].name, code: ev.code ?? codeOf(ev.arguments) };
      break;
    }
    case 'approval_requested': {
      // The call waits for the analyst: its cell shows the code as the model wrote
      // it, and the approve bar, until `approval_resolved`.
      const i = ensureCell(items, ev.call_id, ev.tool);
      items[i] = {
        ...items[i], name: ev.tool ?? items[i].name, code: ev.code ?? items[i].code, running: false,
        approval: { state: 'pending', tool: ev.tool ?? items[i].name, reason: ev.reason ?? '', answer: null, always: false },
      };
      break;
    }
    case 'approval_resolved': {
      // The cell goes on as a normal one; the `tool_call` that follows brings the
      // code that runs (an edit's), a rejected call only its `cell_result`.
      const i = ensureCell(items, ev.call_id);
      const rejected = ev.resolution === 'rejected';
      const was = items[i].approval ?? { tool: items[i].name, reason: '' };
      items[i] = {
        ...items[i], running: !rejected && !items[i].result,
        approval: { ...was, state: ev.resolution ?? 'approved', answer: rejected ? (ev.reason ?? '') : null, always: !!ev.always },
      };
      break;
    }
    case 'cell_output': {
      // From Run (or the ask's start) to the first output of any cell, by the event's
      // own time: what a warm kernel is for.
      if (s.firstOutputMs == null && ev.at) s.firstOutputMs = Math.max(0, Date.parse(ev.at) - s.startedAt);
      const i = ensureCell(items, ev.call_id);
      const outputs = items[i].outputs.slice();
      const stream = ev.stream ?? 'stdout';
      const j = outputs.length - 1;
      if (j >= 0 && outputs[j].stream === stream && stream !== 'image') outputs[j] = { stream, text: outputs[j].text + (ev.text ?? '') };
      else outputs.push({ stream, text: ev.text ?? '' });
      items[i] = { ...items[i], outputs };
      break;
    }
    case 'egress': {
      // A connection through the allowlist proxy while the call ran: one line per
      // target and fate, closed connections adding their bytes to their target's.
      const i = ensureCell(items, ev.call_id);
      items[i] = { ...items[i], network: addConnection(items[i].network ?? [], ev.connection ?? {}) };
      break;
    }
    case 'cell_image': {
      const i = ensureCell(items, ev.call_id);
      items[i] = { ...items[i], outputs: [...items[i].outputs, { stream: 'image', path: ev.path }] };
      break;
    }
    case 'cell_result': {
      const i = ensureCell(items, ev.call_id);
      // A rejected call never ran: the text of its result (a past ask's) is only the
      // refusal the model was sent, which the cell says in the analyst's words.
      const streamed = items[i].outputs.some((o) => o.stream !== 'image') || items[i].approval?.state === 'rejected';
      const outputs = streamed ? items[i].outputs : [
        ...(ev.stdout ? [{ stream: 'stdout', text: ev.stdout }] : []),
        ...(ev.stderr ? [{ stream: 'stderr', text: ev.stderr }] : []),
        ...items[i].outputs,
      ];
      items[i] = {
        ...items[i], outputs, running: false,
        result: { status: ev.status ?? 'not_run', durationMs: ev.duration_ms || null, traceback: ev.traceback ?? null, note: ev.note ?? null },
      };
      break;
    }
    case 'artifact': {
      const a = { path: ev.path, kind: ev.kind, bytes: ev.bytes, callId: ev.call_id || null, version: (ev.bytes ?? 0) + ':' + (ev.at ?? '') };
      const k = s.artifacts.findIndex((x) => x.path === a.path);
      if (k >= 0) s.artifacts[k] = a; else s.artifacts.push(a);
      break;
    }
    case 'usage':
      s.inputTokens = ev.total_input_tokens ?? s.inputTokens;
      s.outputTokens = ev.total_output_tokens ?? s.outputTokens;
      if (ev.cost_usd != null) s.cost = ev.cost_usd;
      break;
    case 'retry':
      // What the attempt streamed is dropped: the next one streams it again.
      for (let i = items.length - 1; i >= 0; i--) if (items[i].kind === 'text' && items[i].streaming) items.splice(i, 1);
      if (!ev.wait_ms) { s.notice = ev.reason ?? s.notice; break; }
      s.notice = `The provider did not answer (${ev.reason ?? 'busy'}); trying again in ${Math.max(1, Math.round((ev.wait_ms ?? 0) / 1000))} s (attempt ${ev.attempt ?? '?'}).`;
      break;
    case 'setup':
      s.notice = setupText(ev);
      break;
    case 'status':
      s.notice = ev.message ?? s.notice;
      break;
    case 'notice':
      // An ask running elsewhere is the state of the ask; a condition is kept with it.
      if (ev.notice === 'running_elsewhere') s.notice = noticeText(ev);
      else items.push({ kind: 'note', text: noticeText(ev), notice: ev.notice });
      break;
    case 'error':
      s.error = [s.error, ev.error?.message ?? ev.message ?? 'error'].filter(Boolean).join('\n');
      s.errorCode = ev.error?.code ?? null;
      break;
    case 'ask_finished': {
      s.status = 'ended';
      s.ending = ev.status ?? 'finished';
      s.endedAt = ev.at ? Date.parse(ev.at) || Date.now() : Date.now();
      s.notice = null;
      for (let i = 0; i < items.length; i++) {
        if (items[i].kind === 'text' && items[i].streaming) items[i] = { ...items[i], streaming: false };
        if (items[i].kind === 'cell' && items[i].running) items[i] = { ...items[i], running: false };
        // A call still waiting when the ask ended was never answered (a stop, a limit).
        if (items[i].kind === 'cell' && items[i].approval?.state === 'pending') items[i] = { ...items[i], approval: { ...items[i].approval, state: 'withdrawn' } };
      }
      if (ev.answer && !items.some((it) => it.kind === 'text' && it.text === ev.answer)) items.push({ kind: 'text', text: ev.answer, streaming: false });
      // The files the task named that are not what they should be are marked.
      for (const p of [...(ev.status?.problems ?? []), ...(ev.status?.missing ?? [])]) {
        const path = String(p.path ?? '').replace(/^output\//, '');
        const k = s.artifacts.findIndex((x) => x.path === path);
        if (k >= 0) s.artifacts[k] = { ...s.artifacts[k], invalid: p.problem, version: `${s.artifacts[k].version}:invalid` };
      }
      break;
    }
    case 'call_mode':
      // Said at the start; a change mid-ask (auto moving to steps) is a note too.
      if (s.callMode && s.callMode !== ev.mode) items.push({ kind: 'note', text: `The model's calls now travel as ${CALL_MODES[ev.mode] ?? ev.mode} (${ev.reason ?? ''}).` });
      s.callMode = ev.mode;
      break;
    case 'inputs_profiled':
      s.notice = ev.failed
        ? `The inputs could not be profiled (${ev.failed}); the model reads them itself.`
        : `Inputs profiled for the model: ${ev.tables} table(s) in ${((ev.duration_ms ?? 0) / 1000).toFixed(1)} s.`;
      break;
    case 'outputs_refused': {
      const shown = (ev.refused ?? []).map((r) => `${r.path} (${r.reason})`);
      const more = (ev.count ?? shown.length) - shown.length;
      items.push({ kind: 'note', text: `Not brought back: ${shown.join('; ')}${more > 0 ? `; and ${more} more` : ''}.` });
      break;
    }
    case 'nothing_ran':
      items.push({ kind: 'note', text: `Nothing ran: ${ev.reason ?? 'the reply held no call'}. The model was told how to call a tool.` });
      break;
    default:
      break;
  }
  return s;
}

// What of a reply passed its cap (the core's `Capped`), in words.
const CUT_PARTS = { text: 'text', reasoning: 'reasoning', arguments: 'tool-call arguments', event: 'one event of the stream' };

/// A typed notice (the core's `Notice`) as a sentence.
export function noticeText(ev) {
  const list = (xs) => (xs ?? []).join(', ');
  switch (ev.notice) {
    case 'archive_not_kept':
      return ev.disk_full
        ? `The disk is full: this ask's workspace was not saved (the earlier one stays). ${ev.reason ?? ''}`.trim()
        : `This ask's workspace was not saved (${ev.reason ?? 'unknown reason'}).`;
    case 'earlier_outputs_kept': {
      const more = (ev.count ?? 0) - (ev.paths ?? []).length;
      return `Kept ${ev.count} earlier output(s) the sandbox no longer had: ${list(ev.paths)}${more > 0 ? `, and ${more} more` : ''}.`;
    }
    case 'earlier_output_replaced':
      return `The earlier output ${ev.path} was replaced: the code made a folder of that name.`;
    case 'transcript_repaired':
      return `The last line of the transcript was cut by an earlier crash; its ${ev.bytes} bytes were set aside in ${ev.set_aside}.`;
    case 'inputs_not_restaged':
      return `Could not stage again (the original is gone): ${(ev.inputs ?? []).map((g) => `${g.name} (${g.original})`).join(', ')}.`;
    case 'input_changed':
      return `${ev.name} changed on your disk during the session; it now has ${ev.bytes} bytes.`;
    case 'running_elsewhere':
      return 'This ask is running in another process (a terminal, say); open the session again to see how it ends.';
    case 'reply_cut':
      return ev.what === 'repetition'
        ? `The model's reply fell into a loop (the same ${ev.cap} characters over and over); the rest was not read, and the model was told.`
        : `The model's reply was cut: its ${CUT_PARTS[ev.what] ?? ev.what} passed ${bytes(ev.cap)}, the most Sandalyst reads of one reply; the rest was not read, and the model was told.`;
    case 'fresh_start':
      return `${ev.stale_turns} turns wrote none of the missing files, so the model starts afresh (attempt ${ev.attempt}) without its earlier cells of this ask in view; the files and the kernel stay.`;
    case 'more_outputs_changed':
      return `${ev.count} more files changed in output/; they are collected when the ask ends.`;
    case 'figure_not_kept':
      return `A figure the code drew was not kept (${ev.reason ?? 'unknown reason'}).`;
    case 'input_note':
      return inputNoteText(ev);
    case 'sandbox_not_closed':
      return `The sandbox did not close cleanly (${ev.reason ?? 'unknown reason'}); a later start removes what is left of it.`;
    case 'workspace_recovered':
      return workspaceRecoveredText(ev);
    default:
      return ev.notice ?? '';
  }
}

/// A workspace that did not come back as the last ask left it (the core's
/// `ArchiveProblem`, the outputs put back or not), as a sentence.
function workspaceRecoveredText(ev) {
  const n = ev.outputs ?? 0;
  if (ev.archive === 'older') {
    return ev.not_put_back
      ? `The workspace came back from an archive older than the last outputs; ${n} newer file(s) of output/ could not be put back (${ev.not_put_back}), but the app still has them.`
      : `The workspace came back from an archive older than the last outputs; ${n} file(s) of output/ were brought up to date from the app's copy. Other files written since are gone.`;
  }
  const why = {
    not_restored: `The workspace archive could not be restored (${ev.reason})`,
    unreadable: `The workspace archive could not be read (${ev.reason})`,
    missing: 'The workspace archive was missing',
  }[ev.archive] ?? 'The workspace archive was not used';
  return ev.not_put_back
    ? `${why}: input/ was staged again from your files, but ${n} file(s) of output/ could not be put back (${ev.not_put_back}); the app still has them. Other files of the workspace are gone.`
    : `${why}: input/ was staged again from your files and output/ put back from the app's copy (${n} file${n === 1 ? '' : 's'}). Other files of the workspace are gone.`;
}

// What a path is (the core's `FileKind`), in words.
const FILE_KINDS = {
  file: 'a regular file', dir: 'a folder', symlink: 'a link', fifo: 'a named pipe (FIFO)', socket: 'a socket',
  char_device: 'a character device', block_device: 'a block device', other: 'not a regular file or folder',
};
const ONLY = 'only regular files and folders can be staged';
// How a link left out can be included (the core's `Include`), as the desktop offers it.
const INCLUDE = {
  add_target: 'add the target itself',
  follow_links_outside: 'turn on "Follow links that leave a dropped folder" in Settings',
};

/// A note about a dropped folder's entries (the core's `InputNote`: the `input_note`
/// notice, and each of `add_files`' notes) as a sentence.
export function inputNoteText(n) {
  const kind = (k) => FILE_KINDS[k] ?? k;
  const entries = (count) => `${count} entr${count === 1 ? 'y' : 'ies'}`;
  switch (n.kind) {
    case 'link_followed':
      return `input/${n.dest} is a link to ${n.target}; followed.`;
    case 'link_left_out': {
      const why = {
        outside: 'outside the dropped folder',
        hidden_target: 'a hidden entry of the folder (hidden entries are not staged)',
        loop: 'which leads back to itself (a loop)',
        dangling: 'which does not exist',
        special: `which is ${kind(n.target_is)}; ${ONLY}`,
      }[n.why] ?? n.why;
      const how = (n.include ?? []).map((i) => INCLUDE[i] ?? i);
      const include = how.length ? ` To include it, ${how.join(', or ')}.` : '';
      return `Left out input/${n.dest}: a link to ${n.target}, ${why}.${include}`;
    }
    case 'entry_left_out': {
      const why = {
        special: `it is ${kind(n.is)}; ${ONLY}`,
        unreadable: `it cannot be read (${n.reason})`,
        changed: `it changed while it was being staged (it is now ${kind(n.is)})`,
      }[n.why] ?? n.why;
      return `Left out input/${n.dest}: ${why}.`;
    }
    case 'hidden_left_out': {
      const names = n.names ?? [];
      const more = names.length > 3 ? `, and ${names.length - 3} more` : '';
      return `Left out ${entries(names.length)} of input/${n.folder} that are hidden: ${names.slice(0, 3).join(', ')}${more}.`;
    }
    case 'bad_names_left_out':
      return `Left out ${entries(n.count)} of input/${n.folder} whose names are not valid UTF-8.`;
    case 'more_notes':
      return `… and ${n.count} more notes about the dropped folders.`;
    default:
      return n.kind ?? '';
  }
}

/// A set-up stage as a sentence.
// Why a file was copied rather than mounted, said only where it is news to the user;
// small, added-later and restored files are copied as a matter of course.
const COPY_WHY = {
  forced: 'copying was asked for',
  remote_engine: 'the engine is not on this machine',
  engine_not_supported: 'this engine cannot mount it',
  engine_sees_other_files: 'the engine sees other files than this app',
  not_world_readable: 'the file is not readable by all users',
  too_many_files: 'more than 32 large files',
};

export function setupText(ev) {
  switch (ev.stage) {
    case 'engine': return `Engine: ${ev.name} ${ev.version}`;
    case 'leftovers_removed': return `Removed ${ev.count} leftover container(s).`;
    case 'image_build': return `Building the sandbox image: ${ev.line}`;
    case 'image_ready': return `Sandbox image ${ev.tag} is ready.`;
    case 'container_starting': return 'Starting the sandbox…';
    case 'staging': return `Staging ${ev.files} file(s) into the sandbox…`;
    case 'staged': return ev.method === 'bind_mount'
      ? `${ev.files} file(s) mounted read-only (no copy).`
      : `${ev.files} file(s) copied into the sandbox${COPY_WHY[ev.reason] ? ` (${COPY_WHY[ev.reason]})` : ''}.`;
    case 'sandbox_ready': return ev.warm_for_ms == null
      ? `Sandbox ready (${(ev.millis / 1000).toFixed(1)} s).`
      : `Sandbox ready, warm: ready for ${(ev.warm_for_ms / 1000).toFixed(1)} s (its start took ${(ev.millis / 1000).toFixed(1)} s).`;
    case 'workspace_restored': return 'The files of the earlier sandbox were restored.';
    case 'sandbox_released': return 'The idle sandbox was released; it comes back on the next ask.';
    default: return ev.stage ? String(ev.stage).replace(/_/g, ' ') : '';
  }
}

/// How a model's calls travel, in words.
const CALL_MODES = { native: 'native tool calls', schema: 'steps held to a JSON schema', text: 'steps written as JSON text' };

/// A time to the first output: milliseconds while they matter.
function firstOutput(ms) {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/// Turn, time, the first output's time, tokens, cost and (for a model where it is a
/// choice) how its calls travel, as one line.
export function statsLine(s, now = Date.now(), fmt) {
  const parts = [];
  if (s.callMode && s.callMode !== 'native') parts.push(s.callMode === 'schema' ? 'schema steps' : 'text steps');
  if (s.turn) parts.push(`turn ${s.turn}${s.maxTurns ? `/${s.maxTurns}` : ''}`);
  parts.push(fmt.duration((s.endedAt ?? now) - s.startedAt));
  if (s.firstOutputMs != null) parts.push(`first output ${firstOutput(s.firstOutputMs)} after Run`);
  if (s.inputTokens || s.outputTokens) parts.push(`${fmt.tokens(s.inputTokens + s.outputTokens)} tokens`);
  if (s.cost != null) parts.push(fmt.cost(s.cost));
  return parts.join(' · ');
}
