//! The window opens where, as big and as maximised as it was left, at the zoom it was
//! left at (`sandalyst::api::window` keeps the file and says where a saved window may
//! go).
//!
//! The state is written shortly after each move or resize, not only on a clean exit:
//! an app that is killed (a crash, a logout, a test ending its session) still comes
//! back as it was. The window starts hidden (`visible: false`) and is shown once
//! placed, so it never jumps from the default size to the saved one.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sandalyst::api::window::{self, Rect, WindowState};
use tauri::{
    AppHandle, Manager, PhysicalPosition, PhysicalSize, Runtime, WebviewWindow, WindowEvent,
};

/// How long the window must be still before its state is written (a drag is dozens of
/// events a second).
const SETTLE: Duration = Duration::from_millis(400);

/// Place `w` as the saved state says, then show it.
pub fn restore<R: Runtime>(w: &WebviewWindow<R>, data_root: &std::path::Path) {
    if let Some(saved) = window::load(data_root) {
        let monitors: Vec<Rect> = w
            .available_monitors()
            .unwrap_or_default()
            .iter()
            .map(|m| Rect {
                x: m.position().x,
                y: m.position().y,
                width: m.size().width,
                height: m.size().height,
            })
            .collect();
        let p = window::placement(&saved, &monitors, min_size(w));
        let _ = w.set_size(PhysicalSize::new(p.width, p.height));
        if let Some((x, y)) = p.position {
            let _ = w.set_position(PhysicalPosition::new(x, y));
        }
        if p.maximized {
            let _ = w.maximize();
        }
        if saved.zoom != 1.0 {
            let _ = w.set_zoom(saved.zoom);
        }
        tracing::debug!(?saved, "window restored");
    }
    let _ = w.show();
}

/// The window's minimum size from its configuration, in physical pixels.
fn min_size<R: Runtime>(w: &WebviewWindow<R>) -> (u32, u32) {
    let scale = w.scale_factor().unwrap_or(1.0);
    let conf = w.config().app.windows.iter().find(|c| c.label == w.label());
    let px = |v: Option<f64>| (v.unwrap_or(0.0) * scale).round() as u32;
    conf.map_or((0, 0), |c| (px(c.min_width), px(c.min_height)))
}

/// What is known of the window, and the write that is waiting.
#[derive(Default)]
struct Tracker {
    /// The last position and size while neither maximised nor minimised: what a
    /// maximised window comes back to when it is restored.
    normal: Option<WindowState>,
    maximized: bool,
    zoom: f64,
    /// Bumped on every change; a write goes ahead only if none came after it.
    generation: u64,
}

/// The main window's tracker, kept by the app: View's zoom items change it too.
#[derive(Clone)]
pub struct Tracked {
    tracker: Arc<Mutex<Tracker>>,
    root: PathBuf,
}

impl Tracked {
    /// Note a change made by `change` and write the state once things are still
    /// (`now`: at once, as the window closes).
    fn changed(&self, now: bool, change: impl FnOnce(&mut Tracker)) {
        let generation = {
            let mut t = self.tracker.lock().unwrap();
            change(&mut t);
            t.generation += 1;
            t.generation
        };
        if now {
            write(&self.tracker, &self.root, generation);
            return;
        }
        let me = self.clone();
        tauri::async_runtime::spawn(async move {
            tokio::time::sleep(SETTLE).await;
            write(&me.tracker, &me.root, generation);
        });
    }
}

/// Write the state of `w` to `data_root` whenever it has moved or been resized.
pub fn track<R: Runtime>(w: &WebviewWindow<R>, data_root: PathBuf) {
    let saved = window::load(&data_root);
    let tracked = Tracked {
        tracker: Arc::new(Mutex::new(Tracker {
            normal: saved,
            zoom: saved.map_or(1.0, |s| s.zoom),
            ..Default::default()
        })),
        root: data_root,
    };
    w.manage(tracked.clone());
    let win = w.clone();
    w.on_window_event(move |event| {
        let now = matches!(event, WindowEvent::CloseRequested { .. });
        if now || matches!(event, WindowEvent::Moved(_) | WindowEvent::Resized(_)) {
            tracked.changed(now, |t| observe(&win, t));
        }
    });
}

/// The page's zoom now (1: 100 %).
pub fn zoom<R: Runtime>(app: &AppHandle<R>) -> f64 {
    app.try_state::<Tracked>()
        .map_or(1.0, |t| t.tracker.lock().unwrap().zoom)
}

/// The page's zoom was changed to `z`: kept with the window's state.
pub fn zoomed<R: Runtime>(app: &AppHandle<R>, z: f64) {
    if let Some(t) = app.try_state::<Tracked>() {
        t.changed(false, |t| t.zoom = z);
    }
}

/// Read the window's state into `t`.
fn observe<R: Runtime>(w: &WebviewWindow<R>, t: &mut Tracker) {
    if w.is_minimized().unwrap_or(false) {
        return;
    }
    t.maximized = w.is_maximized().unwrap_or(false);
    if t.maximized {
        return;
    }
    if let (Ok(pos), Ok(size)) = (w.outer_position(), w.inner_size()) {
        if size.width > 0 && size.height > 0 {
            t.normal = Some(WindowState {
                x: pos.x,
                y: pos.y,
                width: size.width,
                height: size.height,
                maximized: false,
                zoom: t.zoom,
            });
        }
    }
}

fn write(tracker: &Mutex<Tracker>, root: &std::path::Path, generation: u64) {
    let t = tracker.lock().unwrap();
    if t.generation != generation {
        return; // a later change writes
    }
    let Some(normal) = t.normal else { return };
    let state = WindowState {
        maximized: t.maximized,
        zoom: t.zoom,
        ..normal
    };
    if let Err(e) = window::save(root, &state) {
        tracing::warn!(error = %e, "the window's size and position were not saved");
    }
}
