// Every chart of a session, for the plots pane: the figures cells displayed
// (`cell_image`), the image files they saved in output/ (`artifact`) and the
// interactive charts they saved as HTML, newest first, each with the ask and the cell
// that made it and, for a saved chart, the SVG or PDF saved beside it under the same
// name. Pure: from the asks' states (runstate.js).

const RASTER = ['png', 'jpg', 'jpeg', 'gif', 'webp'];
// An interactive chart (a Plotly page with its library inlined), shown in a sandboxed frame.
const INTERACTIVE = ['html', 'htm'];
// What a chart saved under the same stem may also be, offered for saving.
const ALTERNATES = ['svg', 'pdf'];

function ext(path) {
  const m = /\.([A-Za-z0-9]+)$/.exec(path);
  return m ? m[1].toLowerCase() : '';
}

function stem(path) {
  return path.replace(/\.[A-Za-z0-9]+$/, '');
}

export function baseName(path) {
  return String(path).split('/').pop();
}

/// `asks`: [{ id, state }] in the conversation's order. Returns plots, newest first:
/// { key, askId, ask (1-based), callId, cell (its number in the ask, or null),
///   path (inside the session folder), version, name, kind: 'figure' | 'file',
///   png (the file is a PNG), interactive (an HTML chart), alternates: [{ format, path }] }.
export function collectPlots(asks) {
  const byPath = new Map(); // saved files: the newest ask's record of each path
  const plots = [];
  asks.forEach(({ id, state }, k) => {
    const cells = state.items.filter((it) => it.kind === 'cell');
    const number = (callId) => cells.find((c) => c.callId === callId)?.number ?? null;
    // Saved files of this ask, grouped by stem: the image shown, its other formats.
    const groups = new Map();
    const files = [];
    for (const a of state.artifacts) {
      const e = ext(a.path);
      if (INTERACTIVE.includes(e)) {
        // Its own entry beside a PNG of the same name: both are charts to look at.
        files.push({
          key: `file:${a.path}`, askId: id, ask: k + 1, callId: a.callId || null, cell: number(a.callId),
          path: `outputs/${a.path}`, version: a.version ?? '', name: baseName(a.path), kind: 'file',
          png: false, interactive: true, alternates: [],
        });
        continue;
      }
      if (!RASTER.includes(e) && !ALTERNATES.includes(e)) continue;
      const g = groups.get(stem(a.path)) ?? [];
      g.push(a);
      groups.set(stem(a.path), g);
    }
    for (const g of groups.values()) {
      const shown = g.find((a) => RASTER.includes(ext(a.path))) ?? g.find((a) => ext(a.path) === 'svg');
      if (!shown) continue; // a PDF alone is not an image the window can show
      // SVG before PDF, whatever order the files were collected in.
      const alternates = ALTERNATES.flatMap((format) => g.filter((a) => a !== shown && ext(a.path) === format)
        .map((a) => ({ format, path: `outputs/${a.path}` })));
      files.push({
        key: `file:${shown.path}`, askId: id, ask: k + 1, callId: shown.callId || null, cell: number(shown.callId),
        path: `outputs/${shown.path}`, version: shown.version ?? '', name: baseName(shown.path), kind: 'file',
        png: ext(shown.path) === 'png', interactive: false, alternates,
      });
    }
    // In the order the files were saved, interactive charts and images alike.
    const at = (f) => state.artifacts.findIndex((a) => `outputs/${a.path}` === f.path);
    files.sort((x, y) => at(x) - at(y));
    // In the order they were made: each cell's figures, then the files it saved;
    // files whose cell is not in this ask come last.
    const placed = new Set();
    for (const c of cells) {
      c.outputs.filter((o) => o.stream === 'image').forEach((o, n) => {
        plots.push({
          key: `figure:${o.path}`, askId: id, ask: k + 1, callId: c.callId, cell: c.number,
          path: o.path, version: '', name: `figure ${n + 1} of cell ${c.number}`, kind: 'figure',
          png: ext(o.path) === 'png', interactive: false, alternates: [],
        });
      });
      for (const f of files) if (f.callId && f.callId === c.callId) { plots.push(f); placed.add(f); }
    }
    for (const f of files) if (!placed.has(f)) plots.push(f);
  });
  // A file saved again by a later ask is listed once, as the later ask made it.
  const out = [];
  for (let i = plots.length - 1; i >= 0; i--) {
    const p = plots[i];
    if (p.kind === 'file') {
      if (byPath.has(p.path)) continue;
      byPath.set(p.path, p);
    }
    out.push(p);
  }
  return out;
}

/// "Ask 2 · cell 3", or without a known cell "Ask 2".
export function madeByText(p) {
  return p.cell ? `Ask ${p.ask} · cell ${p.cell}` : `Ask ${p.ask}`;
}

/// A file name for saving a plot: a figure's own name, a saved file's name.
export function saveName(p, format = 'png') {
  const name = baseName(p.path);
  return format === 'png' || p.interactive ? name : name.replace(/\.[A-Za-z0-9]+$/, `.${format}`);
}
