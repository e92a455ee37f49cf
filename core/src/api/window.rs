//! The desktop window's size, position and maximised state, kept in the data folder
//! (`window-state.json`, beside the desktop's settings) so that the next start opens
//! the window where and as big as it was left. Plain data and the rule for where a
//! saved window may go on the monitors there are now; the shell reads the window and
//! applies what this says.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The window as it was left: its position and size when not maximised (physical
/// pixels, the outer top-left corner and the inner size, as a window is placed),
/// whether it was maximised over them, and the page's zoom (View's zoom items).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct WindowState {
    pub x: i32,
    pub y: i32,
    pub width: u32,
    pub height: u32,
    pub maximized: bool,
    /// 1 is 100 %; a file written before the zoom was kept has none.
    #[serde(default = "no_zoom")]
    pub zoom: f64,
}

fn no_zoom() -> f64 {
    1.0
}

/// The zoom a page may be given back (a hand-edited 0 or 50 would make it unusable).
const ZOOM_RANGE: std::ops::RangeInclusive<f64> = 0.25..=5.0;

/// A monitor's area, in physical pixels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rect {
    pub x: i32,
    pub y: i32,
    pub width: u32,
    pub height: u32,
}

/// Where the window opens: its size, its position (none: where the system puts it),
/// and whether it is then maximised.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    pub width: u32,
    pub height: u32,
    pub position: Option<(i32, i32)>,
    pub maximized: bool,
}

pub fn path(data_root: &Path) -> PathBuf {
    data_root.join("window-state.json")
}

/// The saved state; none when there is no file or it is not one of ours (the window
/// then opens at its default size, and the next move or resize rewrites the file).
pub fn load(data_root: &Path) -> Option<WindowState> {
    let text = std::fs::read_to_string(path(data_root)).ok()?;
    let mut s: WindowState = serde_json::from_str(&text).ok()?;
    if !ZOOM_RANGE.contains(&s.zoom) {
        s.zoom = 1.0;
    }
    (s.width > 0 && s.height > 0).then_some(s)
}

/// Written beside the old file and renamed over it: a kill mid-write leaves one whole.
pub fn save(data_root: &Path, state: &WindowState) -> std::io::Result<()> {
    let text = serde_json::to_vec_pretty(state).expect("plain data");
    crate::store::write_atomic(&path(data_root), &text)
}

/// How much of the window's top edge (where a title bar is grabbed) must be on one
/// monitor for its saved position to be kept.
const GRAB_WIDTH: u32 = 100;
const GRAB_HEIGHT: u32 = 40;

/// Where `saved` opens on `monitors` (empty: unknown, the saved state as it is). A
/// position whose top edge is on no monitor now (one unplugged, a resolution
/// lowered) is dropped, so the window is never restored out of reach; a size larger
/// than the monitor it opens on shrinks to it; `min` is the window's own minimum.
pub fn placement(saved: &WindowState, monitors: &[Rect], min: (u32, u32)) -> Placement {
    let mut width = saved.width.max(min.0);
    let mut height = saved.height.max(min.1);
    let grab = Rect {
        x: saved.x,
        y: saved.y,
        width: width.min(GRAB_WIDTH),
        height: height.min(GRAB_HEIGHT),
    };
    let home = monitors
        .iter()
        .find(|m| overlap(m, &grab) >= (grab.width as u64) * (grab.height as u64));
    let position = match (home, monitors.is_empty()) {
        (Some(_), _) | (None, true) => Some((saved.x, saved.y)),
        (None, false) => None,
    };
    // The monitor it opens on: its own, or else the largest (where the system is
    // likely to put it).
    let on = home.or_else(|| {
        monitors
            .iter()
            .max_by_key(|m| (m.width as u64) * (m.height as u64))
    });
    if let Some(m) = on {
        width = width.min(m.width.max(min.0));
        height = height.min(m.height.max(min.1));
    }
    Placement {
        width,
        height,
        position,
        maximized: saved.maximized,
    }
}

/// The area two rectangles share, in square pixels.
fn overlap(a: &Rect, b: &Rect) -> u64 {
    let left = a.x.max(b.x) as i64;
    let right = (a.x as i64 + a.width as i64).min(b.x as i64 + b.width as i64);
    let top = a.y.max(b.y) as i64;
    let bottom = (a.y as i64 + a.height as i64).min(b.y as i64 + b.height as i64);
    if right <= left || bottom <= top {
        return 0;
    }
    ((right - left) * (bottom - top)) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCREEN: Rect = Rect {
        x: 0,
        y: 0,
        width: 1920,
        height: 1080,
    };
    const MIN: (u32, u32) = (900, 560);

    fn state(x: i32, y: i32, width: u32, height: u32) -> WindowState {
        WindowState {
            x,
            y,
            width,
            height,
            maximized: false,
            zoom: 1.0,
        }
    }

    #[test]
    fn a_saved_window_comes_back_where_and_as_big_as_it_was() {
        let s = state(37, 41, 1024, 700);
        let p = placement(&s, &[SCREEN], MIN);
        assert_eq!(
            p,
            Placement {
                width: 1024,
                height: 700,
                position: Some((37, 41)),
                maximized: false
            }
        );
        let m = WindowState {
            maximized: true,
            ..s
        };
        assert!(placement(&m, &[SCREEN], MIN).maximized);
    }

    #[test]
    fn a_window_left_on_a_monitor_that_is_gone_opens_on_one_that_is_there() {
        let right = Rect {
            x: 1920,
            y: 0,
            width: 2560,
            height: 1440,
        };
        let s = state(2000, 100, 2400, 1300);
        assert_eq!(
            placement(&s, &[SCREEN, right], MIN).position,
            Some((2000, 100))
        );
        // The right monitor unplugged: no position (the system places it), and the
        // size shrinks to the monitor that is left.
        let p = placement(&s, &[SCREEN], MIN);
        assert_eq!(p.position, None);
        assert_eq!((p.width, p.height), (1920, 1080));
    }

    #[test]
    fn a_title_bar_out_of_reach_drops_the_position_but_a_partly_visible_window_stays() {
        // Only its bottom on screen: the top edge cannot be grabbed.
        assert_eq!(
            placement(&state(100, -600, 1000, 700), &[SCREEN], MIN).position,
            None
        );
        // Its right half off screen, the top-left corner on it: kept.
        assert_eq!(
            placement(&state(1500, 200, 1000, 700), &[SCREEN], MIN).position,
            Some((1500, 200))
        );
    }

    #[test]
    fn sizes_below_the_minimum_are_raised_and_no_monitors_keeps_it_as_saved() {
        let p = placement(&state(5, 5, 300, 200), &[SCREEN], MIN);
        assert_eq!((p.width, p.height), MIN);
        let p = placement(&state(-5000, 5, 1000, 700), &[], MIN);
        assert_eq!(p.position, Some((-5000, 5)));
    }

    #[test]
    fn saved_and_loaded_and_a_damaged_file_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(load(dir.path()), None);
        let s = WindowState {
            maximized: true,
            zoom: 1.25,
            ..state(10, 20, 1100, 760)
        };
        save(dir.path(), &s).unwrap();
        assert_eq!(load(dir.path()), Some(s));
        // A file from before the zoom was kept: 100 %; a zoom out of range: 100 %.
        std::fs::write(
            path(dir.path()),
            r#"{"x":1,"y":2,"width":1000,"height":700,"maximized":false}"#,
        )
        .unwrap();
        assert_eq!(load(dir.path()).unwrap().zoom, 1.0);
        std::fs::write(
            path(dir.path()),
            r#"{"x":1,"y":2,"width":1000,"height":700,"maximized":false,"zoom":0}"#,
        )
        .unwrap();
        assert_eq!(load(dir.path()).unwrap().zoom, 1.0);
        std::fs::write(path(dir.path()), "{\"x\": 1").unwrap();
        assert_eq!(load(dir.path()), None);
        std::fs::write(
            path(dir.path()),
            r#"{"x":0,"y":0,"width":0,"height":0,"maximized":false}"#,
        )
        .unwrap();
        assert_eq!(load(dir.path()), None);
    }
}
