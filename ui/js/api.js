// The backend, as the views call it: the app's commands, one Channel per ask, native
// drag-drop, the dialog plugin and the launch-files event. Nothing else in the page talks to Tauri.

import { AppError } from './errors.js';

const T = window.__TAURI__;

export function invoke(cmd, args = {}) {
  return T.core.invoke(cmd, args).catch((e) => { throw new AppError(e); });
}

/// A channel whose messages go to `onmessage`, in order.
export function channel(onmessage) {
  const ch = new T.core.Channel();
  ch.onmessage = onmessage;
  return ch;
}

/// Native drag-drop on the window: cb({type: 'enter'|'over'|'drop'|'leave', paths}).
export function onDragDrop(cb) {
  return T.webview.getCurrentWebview().onDragDropEvent((e) => cb(e.payload));
}

/// The backend's word that files given at launch (a second launch's) are waiting.
export function onLaunchFiles(cb) {
  return T.event.listen('launch-files', () => cb());
}

/// A native menu item the page carries out: cb(item id), e.g. 'new-session'.
export function onMenu(cb) {
  return T.event.listen('menu', (e) => cb(e.payload));
}

export function pickFiles() {
  return T.dialog.open({ multiple: true, directory: false, title: 'Add files to the session' });
}

export function pickFolder(title) {
  return T.dialog.open({ directory: true, multiple: false, title });
}

export function pickSave(defaultPath, filters, title = 'Export to') {
  return T.dialog.save({ defaultPath, filters, title });
}
