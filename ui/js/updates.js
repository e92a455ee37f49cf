// Help → Check for Updates…: what the configured feed offers, shown in a dialog; an
// update is installed only when the analyst clicks Install, and a refused signature
// is said in the dialog (nothing was installed).

import { $ } from './dom.js';

/// The dialog's words for a check's result (`check_for_updates`): status line, and
/// for a found update its heading and notes.
export function describeCheck(c) {
  switch (c?.status) {
    case 'off': return { status: c.why, found: null };
    case 'up_to_date':
      return {
        status: c.latest && c.latest !== c.current
          ? `Sandalyst ${c.current} is up to date (the newest published is ${c.latest}).`
          : `Sandalyst ${c.current} is up to date.`,
        found: null,
      };
    case 'available':
      return {
        status: `Sandalyst ${c.version} is available; you have ${c.current}.`,
        found: { version: c.version, heading: `What's new in ${c.version}`, notes: c.notes || 'No release notes.', date: c.date ? c.date.slice(0, 10) : '' },
      };
    default: return { status: 'The update check gave no answer.', found: null };
  }
}

/// Progress of the download, as the bar's words.
export function progressText(p) {
  const mb = (n) => (n / 1048576).toFixed(1);
  return p.total ? `Downloading… ${mb(p.downloaded)} of ${mb(p.total)} MB` : `Downloading… ${mb(p.downloaded)} MB`;
}

/// Open the dialog and check. `invoke` and `channel` are the api's.
export async function checkForUpdates(invoke, channel) {
  const d = $('#updates');
  const show = (el, on) => { el.hidden = !on; };
  const error = (e) => { $('#updates-error').textContent = e ? String(e.message ?? e) : ''; show($('#updates-error'), !!e); };
  $('#updates-status').textContent = 'Checking for updates…';
  show($('#updates-found'), false);
  show($('#updates-install'), false);
  show($('#updates-restart'), false);
  show($('#updates-progress'), false);
  error(null);
  if (!d.open) d.showModal();
  let checked;
  try {
    checked = await invoke('check_for_updates');
  } catch (e) {
    $('#updates-status').textContent = 'Could not check for updates.';
    error(e);
    return;
  }
  const v = describeCheck(checked);
  $('#updates-status').textContent = v.status;
  if (!v.found) return;
  $('#updates-heading').textContent = v.found.heading;
  $('#updates-date').textContent = v.found.date;
  $('#updates-notes').textContent = v.found.notes;
  show($('#updates-found'), true);
  const install = $('#updates-install');
  show(install, true);
  install.disabled = false;
  install.onclick = async () => {
    install.disabled = true;
    error(null);
    const bar = $('#updates-progress');
    bar.removeAttribute('value');
    show(bar, true);
    $('#updates-status').textContent = `Downloading Sandalyst ${v.found.version}…`;
    try {
      await invoke('install_update', {
        version: v.found.version,
        onProgress: channel((p) => {
          if (p.total) { bar.max = p.total; bar.value = p.downloaded; }
          $('#updates-status').textContent = progressText(p);
        }),
      });
    } catch (e) {
      show(bar, false);
      show(install, false);
      $('#updates-status').textContent = e.code === 'update_signature'
        ? `The update to ${v.found.version} was refused: nothing was installed.`
        : `The update to ${v.found.version} was not installed.`;
      error(e);
      return;
    }
    show(bar, false);
    show(install, false);
    $('#updates-status').textContent = `Sandalyst ${v.found.version} is installed. Restart to use it.`;
    show($('#updates-restart'), true);
  };
}

/// The dialog's own buttons (once, at start).
export function wireUpdates(invoke) {
  $('#updates-close').addEventListener('click', () => $('#updates').close());
  $('#updates-restart').addEventListener('click', () => invoke('restart_app'));
}
