// Zoom and pan of an image view. Pure: a view is {scale, x, y} (translation in px).

export const MIN_SCALE = 0.05;
export const MAX_SCALE = 16;

export function clampScale(s) { return Math.min(MAX_SCALE, Math.max(MIN_SCALE, s)); }

/// Zoom by `factor` keeping the point (cx, cy) of the viewport where it is.
export function zoomAt(view, factor, cx, cy) {
  const scale = clampScale(view.scale * factor);
  const k = scale / view.scale;
  return { scale, x: cx - (cx - view.x) * k, y: cy - (cy - view.y) * k };
}

/// The view that fits an image of (w, h) into a viewport of (vw, vh), centred; never enlarged.
export function fit(w, h, vw, vh) {
  if (!w || !h || !vw || !vh) return { scale: 1, x: 0, y: 0 };
  const scale = Math.min(1, vw / w, vh / h);
  return { scale, x: (vw - w * scale) / 2, y: (vh - h * scale) / 2 };
}

/// 100%: natural size, centred when smaller than the viewport.
export function actual(w, h, vw, vh) {
  return { scale: 1, x: Math.max(0, (vw - w) / 2), y: Math.max(0, (vh - h) / 2) };
}

export function pan(view, dx, dy) { return { ...view, x: view.x + dx, y: view.y + dy }; }
