// The app: wires the views to the backend. State lives here; each view draws its part.

import { $, h, clear } from './dom.js';
import { invoke, channel, onDragDrop, onLaunchFiles, onMenu, pickFiles, pickFolder, pickSave } from './api.js';
import * as fmt from './format.js';
import { inputNoteText, newAsk, noticeText, reduce, setupText } from './runstate.js';
import { AskView } from './runview.js';
import { renderFiles, showDropOverlay } from './workspace.js';
import { renderHistory, confirmDialog } from './history.js';
import { openSettings } from './settings.js';
import { openHelp } from './help.js';
import { checkForUpdates, wireUpdates } from './updates.js';
import { actionFor } from './shortcuts.js';
import { previewElement } from './artifacts.js';
import { REFERENCE_PROMPT } from './examples.js';
import { MODES } from './approval.js';
import { describeNetwork } from './network.js';
import { collectPlots } from './plotlist.js';
import { PlotsPane } from './plots.js';

const app = {
  info: null,
  settings: null,
  session: null, // {id, title}
  files: [],
  asks: new Map(), // ask id -> {state, view}
  running: null, // ask id
  sessions: [],
  plots: null, // the plots pane while it is open in the side panel
  previewing: null, // the name of the file last shown in the side panel
};

function toast(text, ms = 4000) {
  const t = $('#toast');
  t.textContent = text;
  t.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { t.hidden = true; }, ms);
}

function setBusy() {
  const running = !!app.running;
  $('#run').hidden = running;
  $('#stop').hidden = !running;
  $('#export').disabled = !app.session;
  $('#rerun').disabled = !app.session || running || app.asks.size === 0;
  $('#prompt').placeholder = app.asks.size
    ? 'Ask a follow-up in the same session (Ctrl+Enter)'
    : 'What do you want to know? e.g. look for abnormal energy-use events and explain them (Ctrl+Enter to run)';
  document.body.classList.toggle('is-running', running);
}

function showEmpty() {
  $('#empty').hidden = app.asks.size > 0;
  $('#offline-card').hidden = !(app.info?.offline);
}

function setTitle(title) {
  $('#session-title').textContent = title || 'New session';
  document.title = title ? `${title} · Sandalyst` : 'Sandalyst';
}

// ---- model picker ----
function renderModels() {
  const sel = clear($('#model'));
  sel.append(h('option', { value: 'offline' }, 'Offline analyst (built in)'));
  const s = app.settings;
  if (s && s.provider !== 'offline' && s.model) {
    sel.append(h('option', { value: `${s.provider}:${s.model}` }, `${s.model} (${s.provider})`));
    sel.value = `${s.provider}:${s.model}`;
  }
  if (app.info?.offline) sel.value = 'offline';
}

// ---- the sandbox's isolation and network, as set or in force ----
function showControls(c) {
  const iso = { auto: 'automatic', runc: 'runc', gvisor: 'gVisor' }[c?.isolation] ?? (c?.isolation || 'automatic');
  $('#controls').textContent = `Sandbox: ${iso} · network: ${describeNetwork(c?.network)}`;
}

// ---- approval picker: which calls of this session wait for the analyst ----
function renderApprovalModes() {
  const sel = clear($('#approval'));
  for (const m of MODES) sel.append(h('option', { value: m.value, title: m.long }, m.short));
}

/// The session's mode (a new session: the settings' default).
function showApproval(mode) {
  const sel = $('#approval');
  sel.value = MODES.some((m) => m.value === mode) ? mode : 'auto';
  sel.title = MODES.find((m) => m.value === sel.value).long;
}

// ---- engine banner ----
async function checkEngine() {
  const st = await invoke('engine_status').catch((e) => ({ reachable: false, message: String(e) }));
  $('#banner').hidden = st.reachable;
  if (!st.reachable) $('#banner-text').textContent = `${st.message ?? ''} ${st.fix ?? ''}`;
  return st;
}

// ---- sessions ----
async function refreshHistory() {
  app.sessions = await invoke('list_sessions').catch(() => []);
  const mine = app.sessions.find((x) => x.id === app.session?.id);
  if (mine && mine.title && mine.title !== app.session.title) {
    app.session.title = mine.title;
    setTitle(mine.title);
  }
  renderHistory(app.sessions, app.session?.id, { onOpen: openSession, onRename: renameSession, onDelete: deleteSession });
}

async function ensureSession() {
  if (app.session) return app.session;
  const s = await invoke('create_session');
  app.session = { id: s.id, title: s.title };
  setTitle(s.title);
  watch(s.id);
  refreshHistory();
  return app.session;
}

/// The session's own events (set-up, staging, engine errors) as a status line.
function watch(id) {
  invoke('watch_session', {
    sessionId: id,
    onEvent: channel((ev) => {
      if (app.session?.id !== id) return;
      if (ev.type === 'setup') $('#session-status').textContent = setupText(ev);
      else if (ev.type === 'status') $('#session-status').textContent = ev.message;
      else if (ev.type === 'notice') $('#session-status').textContent = noticeText(ev);
      else if (ev.type === 'error') {
        $('#session-status').textContent = ev.error?.message ?? '';
        if (ev.error?.code === 'engine_unavailable') checkEngine();
      }
    }),
  }).catch(() => {});
}

function resetView() {
  app.asks.clear();
  app.running = null;
  clear($('#asks'));
  $('#session-status').textContent = '';
  closePreview();
  app.files = [];
  drawFiles();
  showEmpty();
  setBusy();
  refreshPlots();
}

function newSession() {
  if (app.running) { toast('Stop the running ask first (Esc).'); return; }
  app.session = null;
  setTitle(null);
  resetView();
  showApproval(app.settings?.approval);
  showControls(app.settings);
  refreshHistory();
  $('#prompt').focus();
}

async function openSession(id) {
  if (app.running) { toast('Stop the running ask first (Esc).'); return; }
  let s;
  try { s = await invoke('open_session', { sessionId: id }); } catch (e) { toast(String(e)); return; }
  resetView();
  app.session = { id: s.id, title: s.title };
  setTitle(s.title);
  showApproval(s.approval);
  showControls(s);
  watch(s.id);
  app.files = s.files || [];
  drawFiles();
  for (const a of s.asks || []) {
    let st = newAsk(a.ask_id, a.prompt, a.started_at ? Date.parse(a.started_at) : Date.now());
    for (const ev of a.events || []) st = reduce(st, { ...ev, at: a.ended_at ?? a.started_at });
    // Asks of a process that is gone come marked interrupted; one still without an
    // ending is running in another process, and is drawn so (it cannot be stopped here).
    const view = new AskView(app.session.id, st, st.status === 'running' ? {} : { onStop: stop });
    app.asks.set(a.ask_id, { state: st, view });
    $('#asks').append(view.el);
  }
  refreshPlots();
  showEmpty();
  setBusy();
  refreshHistory();
}

async function renameSession(id, title) {
  try { await invoke('rename_session', { sessionId: id, title }); } catch (e) { toast(String(e)); }
  if (app.session?.id === id) { app.session.title = title; setTitle(title); }
  refreshHistory();
}

async function deleteSession(s) {
  const ok = await confirmDialog(`Delete the session "${s.title || 'Untitled'}" with its files and results? This cannot be undone.`);
  if (!ok) return;
  try { await invoke('delete_session', { sessionId: s.id }); } catch (e) { toast(String(e)); return; }
  if (app.session?.id === s.id) newSession();
  refreshHistory();
}

// ---- files ----
function drawFiles() {
  renderFiles(app.files, { onPreview: previewFile, onRemove: removeFile, busy: !!app.running });
}

/// What a drop and the file dialog both call (and the WebDriver suite, which cannot
/// synthesise an OS drag).
async function addPaths(paths) {
  if (!paths || !paths.length) return;
  try {
    const s = await ensureSession();
    const added = await invoke('add_files', { sessionId: s.id, paths });
    app.files = added.files;
    drawFiles();
    const what = `Added ${paths.length === 1 ? fmt.baseName(paths[0]) : `${paths.length} items`}.`;
    // Links followed and entries left out are said, never skipped silently.
    if (added.notes?.length) toast([what, ...added.notes.map(inputNoteText)].join('\n'), 15000);
    else toast(what);
  } catch (e) { toast(String(e), 8000); }
}

/// Files given at launch (the command line, the file manager's "Open with", a second
/// launch): each launch's files open in a new session; the ones that are missing are
/// said. While an ask runs, the new session waits in the history and the ask goes on.
async function openLaunchFiles() {
  let launches;
  try { launches = await invoke('launch_files'); } catch (e) { toast(String(e), 8000); return; }
  for (const l of launches) {
    const lines = l.problems.map((p) => `Not opened: ${p}`);
    if (l.paths.length && app.running) {
      try {
        const s = await invoke('create_session');
        await invoke('add_files', { sessionId: s.id, paths: l.paths });
        lines.unshift(`${fmt.baseName(l.paths[0])}${l.paths.length > 1 ? ` and ${l.paths.length - 1} more` : ''} opened in a new session (in the history; the running ask goes on).`);
        refreshHistory();
      } catch (e) { lines.unshift(String(e)); }
    } else if (l.paths.length) {
      newSession();
      await addPaths(l.paths);
      if (lines.length) lines.unshift(`Opened ${l.paths.map((p) => fmt.baseName(p)).join(', ')} in a new session.`);
    }
    if (lines.length) toast(lines.join('\n'), 15000);
  }
}

async function removeFile(f) {
  try {
    app.files = await invoke('remove_file', { sessionId: app.session.id, name: f.name });
    drawFiles();
  } catch (e) { toast(String(e)); }
}

function closePreview() {
  app.plots = null;
  $('#preview').hidden = true;
  clear($('#preview-body'));
  document.body.classList.remove('with-preview');
}

async function previewFile(f) {
  app.plots = null;
  app.previewing = f.name;
  $('#preview-title').textContent = `${f.name} · ${fmt.fileType(f.name)} · ${fmt.bytes(f.bytes)}`;
  const body = clear($('#preview-body'));
  body.append(h('div', { class: 'muted' }, 'Loading…'));
  $('#preview').hidden = false;
  document.body.classList.add('with-preview');
  const height = Math.max(240, body.clientHeight - 60);
  const el = await previewElement(app.session.id, f.name, { height, input: true });
  clear(body).append(el);
}

// ---- plots ----
function sessionPlots() {
  return collectPlots([...app.asks.values()].map((a) => ({ id: a.state.id, state: a.state })));
}

/// The count on the Plots button, and the pane when it is open.
function refreshPlots() {
  const plots = sessionPlots();
  const btn = $('#plots-btn');
  btn.textContent = plots.length ? `Plots (${plots.length})` : 'Plots';
  btn.disabled = !plots.length && !app.plots;
  app.plots?.update(plots);
}

/// Scroll to the cell that made a plot, open it and flash it.
function openCell(p) {
  const a = [...app.asks.values()].find((x) => x.state.id === p.askId);
  const cell = a?.view?.madeBy(a.state, p.callId);
  if (cell) cell.open();
  else toast('The call that made this image is not recorded.');
}

function togglePlots() {
  if (app.plots) { closePreview(); return; }
  // View > Plots (its keys) can ask before there is a session: say why nothing opens.
  if (!app.session) { toast('No plots yet: they appear here once an ask has made some.'); return; }
  $('#preview-title').textContent = 'Plots';
  const body = clear($('#preview-body'));
  $('#preview').hidden = false;
  document.body.classList.add('with-preview');
  app.plots = new PlotsPane(app.session.id, { onOpenCell: openCell, say: (t) => toast(t) });
  body.append(app.plots.el);
  refreshPlots();
}

/// View > Data explorer: the side panel shows the file last shown there (else the
/// first one), or closes when it shows a file already.
function toggleExplorer() {
  if (!$('#preview').hidden && !app.plots) { closePreview(); return; }
  const f = app.files.find((x) => x.name === app.previewing) ?? app.files[0];
  if (!f) { toast('Add a data file first: the explorer shows it.'); return; }
  previewFile(f);
}

// ---- asks ----
let pendingDraw = new Set();
function scheduleDraw(id) {
  pendingDraw.add(id);
  if (scheduleDraw.frame) return;
  scheduleDraw.frame = requestAnimationFrame(() => {
    scheduleDraw.frame = null;
    const conv = $('#conversation');
    const atBottom = conv.scrollHeight - conv.scrollTop - conv.clientHeight < 80;
    for (const k of pendingDraw) { const a = app.asks.get(k); a?.view?.draw(a.state); }
    pendingDraw = new Set();
    if (atBottom) conv.scrollTop = conv.scrollHeight;
    refreshPlots();
  });
}

async function run() {
  const prompt = $('#prompt').value.trim();
  if (app.running) return;
  if (!prompt) { toast('Write what you want to know first (or use the example).'); $('#prompt').focus(); return; }
  let s;
  try { s = await ensureSession(); } catch (e) { toast(String(e), 8000); return; }
  const tempId = `pending-${Date.now()}`;
  const entry = { state: newAsk(tempId, prompt), view: null };
  const onAnswer = (callId, answer) => invoke('answer_approval', { sessionId: s.id, callId, answer });
  entry.view = new AskView(s.id, entry.state, { onStop: stop, onAnswer });
  app.asks.set(tempId, entry);
  $('#asks').append(entry.view.el);
  app.running = tempId;
  showEmpty();
  setBusy();
  drawFiles();
  const conv = $('#conversation');
  conv.scrollTop = conv.scrollHeight;
  let id = tempId;
  const onEvent = channel((ev) => {
    entry.state = reduce(entry.state, ev);
    scheduleDraw(id);
    if (ev.type === 'ask_finished') finished(id);
    if (ev.type === 'error' && ev.error?.code === 'engine_unavailable') checkEngine();
  });
  try {
    const askId = await invoke('ask', { sessionId: s.id, prompt, model: $('#model').value, approval: $('#approval').value, onEvent });
    app.asks.delete(tempId);
    id = askId;
    entry.state = { ...entry.state, id: askId };
    entry.view.el.dataset.ask = askId;
    app.asks.set(askId, entry);
    // Events that came before the id did were drawn under the temporary id, which a
    // frame firing from now on no longer finds: draw under the real one.
    scheduleDraw(askId);
    if (app.running === tempId) app.running = askId;
    $('#prompt').value = '';
  } catch (e) {
    entry.state = reduce(reduce(entry.state, { type: 'error', message: String(e) }), { type: 'ask_finished', status: { status: 'failed', message: String(e) } });
    entry.view.draw(entry.state);
    app.running = null;
    setBusy();
    drawFiles();
  }
}

/// Replay the session's recorded code on new files (no model) into a new session,
/// shown as it runs like an ask.
async function rerun(given) {
  if (!app.session || app.running) return;
  // `given`: paths from a test (a native dialog cannot be driven); else the dialog.
  const picked = Array.isArray(given) ? given : await pickFiles().catch(() => null);
  const paths = Array.isArray(picked) ? picked : picked ? [picked] : [];
  if (!paths.length) return;
  const source = app.session;
  const tempId = `pending-${Date.now()}`;
  const entry = { state: newAsk(tempId, `Re-run of "${source.title || source.id}" on ${paths.map((p) => p.split('/').pop()).join(', ')}`), view: null };
  let id = tempId;
  const onEvent = channel((ev) => {
    if (ev.type === 'ask_started' && ev.ask_id && id === tempId) {
      app.asks.delete(tempId); id = ev.ask_id; app.asks.set(id, entry);
      if (app.running === tempId) app.running = id;
    }
    entry.state = reduce(entry.state, ev);
    scheduleDraw(id);
    if (ev.type === 'ask_finished') { finished(id); offerContinue(entry); }
  });
  let newId;
  try {
    newId = await invoke('rerun_session', { sessionId: source.id, paths, onEvent });
  } catch (e) { toast(String(e), 8000); return; }
  resetView();
  app.session = { id: newId, title: `Re-run: ${source.title || source.id}` };
  setTitle(app.session.title);
  watch(newId);
  entry.view = new AskView(newId, entry.state, { onStop: stop });
  app.asks.set(id, entry);
  $('#asks').append(entry.view.el);
  entry.view.draw(entry.state);
  offerContinue(entry);
  app.running = entry.state.status === 'running' ? id : null;
  showEmpty();
  setBusy();
  refreshHistory();
}

/// A re-run that stopped at a cell failing on the new data can be handed to a model,
/// which sees the replayed cells and the traceback in the session.
const CONTINUE_PROMPT = 'The re-run stopped at a cell that failed on the new data (its traceback is above). Fix that step for the new data, run the remaining steps, and finish what the original requests asked for.';

function offerContinue(entry) {
  if (!entry.view || entry.state.status === 'running' || entry.state.errorCode !== 'replay_failed') return;
  entry.view.offer('Continue with the model', () => {
    $('#prompt').value = CONTINUE_PROMPT;
    $('#prompt').focus();
    toast('Pick a model, adjust the request if you like, and press Run.');
  });
}

function finished(id) {
  if (app.running === id || app.running?.startsWith('pending-')) app.running = null;
  setBusy();
  drawFiles();
  refreshHistory();
}

async function stop() {
  if (!app.running || !app.session) return;
  const a = app.asks.get(app.running);
  if (a) { a.state = { ...a.state, notice: 'Stopping: the model is stopped and the code interrupted…' }; scheduleDraw(app.running); }
  try { await invoke('cancel_ask', { sessionId: app.session.id }); } catch (e) { toast(String(e)); }
}

// ---- export ----
async function exportOutputs() {
  if (!app.session) { toast('Nothing to export yet.'); return; }
  const d = $('#export-dialog');
  // What is included goes with a folder or a zip; the report is one page of its own.
  const includes = () => { $('#export-include').disabled = $('#export-report').checked; };
  for (const id of ['#export-folder', '#export-zip', '#export-report']) $(id).onchange = includes;
  includes();
  d.showModal();
  const choice = await new Promise((resolve) => {
    $('#export-go').onclick = () => { d.close(); resolve(true); };
    $('#export-cancel').onclick = () => { d.close(); resolve(false); };
    d.oncancel = () => resolve(false);
  });
  if (!choice) return;
  const base = (app.session.title || 'sandalyst').replace(/[^A-Za-z0-9 _-]+/g, '').trim().slice(0, 60) || 'sandalyst';
  if ($('#export-report').checked) { await exportReport(base); return; }
  const zip = $('#export-zip').checked;
  const transcript = $('#export-transcript').checked;
  const analysis = $('#export-analysis').checked;
  let dest;
  if (zip) dest = await pickSave(`${base}.zip`, [{ name: 'Zip archive', extensions: ['zip'] }]);
  else {
    const parent = await pickFolder('Export into this folder');
    dest = parent ? `${parent}/${base}` : null;
  }
  if (!dest) return;
  try {
    const done = await invoke('export_session', { sessionId: app.session.id, dest, zip, transcript, analysis });
    // Tables whose cells a spreadsheet would run as formulas are said, with the path.
    if (done.notes.length) toast([`Exported to ${done.path}`, ...done.notes.map((n) => `⚠ ${n}`)].join('\n'), 15000);
    else toast(`Exported to ${done.path}`, 6000);
  } catch (e) { toast(String(e), 8000); }
}

/// The session as one self-contained HTML page, saved where the dialog says.
async function exportReport(base) {
  const dest = await pickSave(`${base}.html`, [{ name: 'HTML report', extensions: ['html'] }], 'Save the report as');
  if (!dest) return;
  try {
    const done = await invoke('export_report', { sessionId: app.session.id, dest });
    // Outputs the page leaves out (too large, not what their name says) are said.
    if (done.notes.length) toast([`Report written to ${done.path}`, ...done.notes.map((n) => `⚠ ${n}`)].join('\n'), 15000);
    else toast(`Report written to ${done.path}`, 6000);
  } catch (e) { toast(String(e), 8000); }
}

// ---- start ----
async function loadInfo() {
  app.info = await invoke('app_info');
  window.sandalystSchemeBase = app.info.scheme_base;
  app.settings = await invoke('get_settings');
  renderModels();
  if (!app.session) { showApproval(app.settings.approval); showControls(app.settings); }
  showEmpty();
}

function keys() {
  document.addEventListener('keydown', (e) => {
    const t = e.target;
    const inText = t && (t.tagName === 'TEXTAREA' || t.tagName === 'INPUT' || t.tagName === 'SELECT' || t.isContentEditable);
    const action = actionFor(e, inText);
    if (!action) return;
    if (document.querySelector('dialog[open]') && action !== 'stop') return;
    switch (action) {
      case 'run': e.preventDefault(); run(); break;
      case 'stop':
        if (document.querySelector('dialog[open]')) return; // the dialog closes itself
        if (app.running) { e.preventDefault(); stop(); } else if (!$('#preview').hidden) closePreview();
        break;
      case 'add': e.preventDefault(); addFromDialog(); break;
      case 'new': e.preventDefault(); newSession(); break;
      case 'export': e.preventDefault(); exportOutputs(); break;
      case 'settings': e.preventDefault(); openSettings(afterSettings); break;
      case 'focus': e.preventDefault(); $('#prompt').focus(); break;
      case 'help': e.preventDefault(); showHelp(); break;
      default: break;
    }
  });
}

function showHelp() { openHelp(app.info?.logs_dir, app.info?.menu); }

function openLogs() { invoke('open_logs_folder').catch((e) => toast(String(e), 8000)); }

/// A native menu item: the same function as the page's button or key of that name.
const MENU = {
  'new-session': () => newSession(),
  'add-files': () => addFromDialog(),
  export: () => exportOutputs(),
  settings: () => openSettings(afterSettings),
  'toggle-explorer': () => toggleExplorer(),
  'toggle-plots': () => togglePlots(),
  shortcuts: () => showHelp(),
  'open-logs': () => openLogs(),
  'check-updates': () => checkForUpdates(invoke, channel),
};

function menuItem(id) {
  // As with the keys: a dialog that is open keeps the window's attention.
  if (document.querySelector('dialog[open]') && id !== 'open-logs') return;
  MENU[id]?.();
}

async function addFromDialog() {
  const picked = await pickFiles().catch(() => null);
  if (picked) addPaths(Array.isArray(picked) ? picked : [picked]);
}

async function afterSettings() {
  await loadInfo();
  toast('Settings saved.');
}

async function main() {
  // Errors of the page, kept for the WebDriver suite's failure messages.
  window.__errors = [];
  window.addEventListener('error', (e) => window.__errors.push(String(e.message)));
  window.addEventListener('unhandledrejection', (e) => window.__errors.push(String(e.reason?.stack ?? e.reason)));
  keys();
  renderApprovalModes();
  $('#approval').addEventListener('change', () => showApproval($('#approval').value));
  $('#run').addEventListener('click', run);
  $('#stop').addEventListener('click', stop);
  $('#new-session').addEventListener('click', newSession);
  $('#add-files').addEventListener('click', addFromDialog);
  $('#export').addEventListener('click', exportOutputs);
  $('#rerun').addEventListener('click', () => rerun());
  $('#plots-btn').addEventListener('click', togglePlots);
  $('#open-settings').addEventListener('click', () => openSettings(afterSettings));
  $('#offline-settings').addEventListener('click', (e) => { e.preventDefault(); openSettings(afterSettings); });
  $('#open-help').addEventListener('click', showHelp);
  $('#help-close').addEventListener('click', () => $('#help').close());
  $('#open-logs').addEventListener('click', openLogs);
  wireUpdates(invoke);
  $('#preview-close').addEventListener('click', closePreview);
  $('#preview-wide').addEventListener('click', () => {
    const wide = document.body.classList.toggle('wide-preview');
    $('#preview-wide').textContent = wide ? 'Narrower' : 'Wider';
  });
  $('#banner-retry').addEventListener('click', checkEngine);
  $('#example').addEventListener('click', () => { $('#prompt').value = REFERENCE_PROMPT; $('#prompt').focus(); });
  // "Ask about this view" in a table: the view's sentence and code go before whatever
  // the analyst has written, and the caret after them, for the question.
  document.addEventListener('sandalyst:ask-view', (e) => {
    const p = $('#prompt');
    p.value = e.detail.text + p.value.replace(/^\s+/, '');
    p.focus();
    p.setSelectionRange(p.value.length, p.value.length);
    p.scrollTop = p.scrollHeight;
  });
  onDragDrop((p) => {
    if (p.type === 'enter' || p.type === 'over') showDropOverlay(true);
    else if (p.type === 'leave') showDropOverlay(false);
    else if (p.type === 'drop') { showDropOverlay(false); addPaths(p.paths); }
  });
  setInterval(() => { for (const a of app.asks.values()) if (a.state.status === 'running') a.view.tick(); }, 1000);
  onMenu(menuItem);
  window.sandalyst = Object.freeze({ addPaths, openSession, newSession, rerun, togglePlots, menuItem });
  setBusy();
  await loadInfo().catch((e) => toast(String(e)));
  await refreshHistory();
  onLaunchFiles(openLaunchFiles);
  await openLaunchFiles();
  document.body.dataset.ready = 'true';
  requestAnimationFrame(() => invoke('page_ready').catch(() => {}));
  checkEngine();
}

main();
