//! The native menu bar: File, Edit, View, Help, with Cmd (macOS) or Ctrl accelerators.
//! One table ([`MENUS`]) says every item: the menu is built from it, the page's
//! Shortcuts list shows its keys (`app_info`), and a menu event is routed by it. An item
//! the page does (New session, Export…, the side panes) is sent to the page as the
//! `menu` event with its id, and the page runs what its button runs; the shell does
//! only Quit and zoom itself, and the editing commands of the focused field.

use serde::Serialize;
use tauri::menu::{
    AboutMetadata, IsMenuItem, Menu, MenuEvent, MenuItem, PredefinedMenuItem, Submenu,
};
use tauri::{AppHandle, Emitter, Manager, Runtime};

/// The event that carries a menu item's id to the page.
pub const EVENT: &str = "menu";

/// Who carries out an item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Does {
    /// The page, as the button of the same name does (the id goes in [`EVENT`]).
    Page,
    /// The shell: quit, zoom.
    Shell,
    /// An editing command on the focused field (undo, copy, ...).
    Edit,
}

#[derive(Clone, Copy, Debug)]
pub enum Entry {
    Item {
        id: &'static str,
        label: &'static str,
        /// Tauri's accelerator syntax; `CmdOrCtrl` is Cmd on macOS, Ctrl elsewhere.
        keys: Option<&'static str>,
        does: Does,
    },
    Separator,
    /// The platform's About box (name, version, licence).
    About,
}

const fn item(id: &'static str, label: &'static str, keys: &'static str, does: Does) -> Entry {
    Entry::Item {
        id,
        label,
        keys: if keys.is_empty() { None } else { Some(keys) },
        does,
    }
}

use Does::{Edit, Page, Shell};

/// The menus, in order. Keys the page also knows (Ctrl+N, Ctrl+O, Ctrl+E, Ctrl+,) are
/// the same here, so a key works the same whether the menu or the page sees it first.
pub const MENUS: &[(&str, &[Entry])] = &[
    (
        "File",
        &[
            item("new-session", "New session", "CmdOrCtrl+N", Page),
            item("add-files", "Add files…", "CmdOrCtrl+O", Page),
            item("export", "Export…", "CmdOrCtrl+E", Page),
            Entry::Separator,
            item("settings", "Settings…", "CmdOrCtrl+,", Page),
            Entry::Separator,
            item("quit", "Quit", "CmdOrCtrl+Q", Shell),
        ],
    ),
    (
        "Edit",
        &[
            item("undo", "Undo", "CmdOrCtrl+Z", Edit),
            item("redo", "Redo", "CmdOrCtrl+Shift+Z", Edit),
            Entry::Separator,
            item("cut", "Cut", "CmdOrCtrl+X", Edit),
            item("copy", "Copy", "CmdOrCtrl+C", Edit),
            item("paste", "Paste", "CmdOrCtrl+V", Edit),
            item("select-all", "Select all", "CmdOrCtrl+A", Edit),
        ],
    ),
    (
        "View",
        &[
            item(
                "toggle-explorer",
                "Data explorer",
                "CmdOrCtrl+Shift+E",
                Page,
            ),
            item("toggle-plots", "Plots", "CmdOrCtrl+Shift+P", Page),
            Entry::Separator,
            item("zoom-in", "Zoom in", "CmdOrCtrl+=", Shell),
            item("zoom-out", "Zoom out", "CmdOrCtrl+-", Shell),
            item("zoom-reset", "Actual size", "CmdOrCtrl+0", Shell),
        ],
    ),
    (
        "Help",
        &[
            item("shortcuts", "Keyboard shortcuts", "F1", Page),
            item("open-logs", "Open logs folder", "", Page),
            Entry::Separator,
            item("check-updates", "Check for Updates…", "", Page),
            Entry::About,
        ],
    ),
];

/// Items that live in the application menu on macOS (its convention), not in File
/// or Help; About goes there too.
const APP_MENU_IDS: &[&str] = &["settings", "check-updates", "quit"];

fn in_app_menu(e: &Entry) -> bool {
    matches!(e, Entry::About) || matches!(e, Entry::Item { id, .. } if APP_MENU_IDS.contains(id))
}

/// The entries of one menu as shown on this platform: on macOS without those of the
/// application menu, and no separator left at an end or doubled by their going.
fn shown(entries: &'static [Entry], mac: bool) -> Vec<&'static Entry> {
    let mut out: Vec<&'static Entry> = Vec::new();
    for e in entries.iter().filter(|e| !(mac && in_app_menu(e))) {
        let sep = matches!(e, Entry::Separator);
        if sep && out.last().is_none_or(|l| matches!(l, Entry::Separator)) {
            continue;
        }
        out.push(e);
    }
    while matches!(out.last(), Some(Entry::Separator)) {
        out.pop();
    }
    out
}

/// A menu item with keys, as the Shortcuts list shows it.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct MenuKey {
    pub menu: &'static str,
    pub id: &'static str,
    pub label: &'static str,
    pub keys: String,
}

/// Every item with keys, the keys as this platform writes them (Cmd or Ctrl).
pub fn keys() -> Vec<MenuKey> {
    keys_for(cfg!(target_os = "macos"))
}

fn keys_for(mac: bool) -> Vec<MenuKey> {
    let mut out = Vec::new();
    for (menu, entries) in MENUS {
        for e in *entries {
            if let Entry::Item {
                id,
                label,
                keys: Some(k),
                ..
            } = e
            {
                out.push(MenuKey {
                    menu,
                    id,
                    label,
                    keys: k.replace("CmdOrCtrl", if mac { "Cmd" } else { "Ctrl" }),
                });
            }
        }
    }
    out
}

/// The item of `id`.
pub fn find(id: &str) -> Option<&'static Entry> {
    MENUS
        .iter()
        .flat_map(|(_, entries)| entries.iter())
        .find(|e| matches!(e, Entry::Item { id: i, .. } if *i == id))
}

/// The menu bar, built from [`MENUS`].
pub fn build<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<Menu<R>> {
    let mut submenus = Vec::new();
    #[cfg(target_os = "macos")]
    {
        let items: Vec<Box<dyn IsMenuItem<R>>> = vec![
            Box::new(about(app)?),
            native(app, find("check-updates").unwrap())?,
            Box::new(PredefinedMenuItem::separator(app)?),
            native(app, find("settings").unwrap())?,
            Box::new(PredefinedMenuItem::separator(app)?),
            Box::new(PredefinedMenuItem::services(app, None)?),
            Box::new(PredefinedMenuItem::hide(app, None)?),
            Box::new(PredefinedMenuItem::hide_others(app, None)?),
            Box::new(PredefinedMenuItem::show_all(app, None)?),
            Box::new(PredefinedMenuItem::separator(app)?),
            native(app, find("quit").unwrap())?,
        ];
        let refs: Vec<&dyn IsMenuItem<R>> = items.iter().map(|b| &**b).collect();
        submenus.push(Submenu::with_items(app, "Sandalyst", true, &refs)?);
    }
    for (title, entries) in MENUS {
        let mut items: Vec<Box<dyn IsMenuItem<R>>> = Vec::new();
        for e in shown(entries, cfg!(target_os = "macos")) {
            items.push(match e {
                Entry::Separator => Box::new(PredefinedMenuItem::separator(app)?),
                Entry::About => Box::new(about(app)?),
                Entry::Item { .. } => native(app, e)?,
            });
        }
        let refs: Vec<&dyn IsMenuItem<R>> = items.iter().map(|b| &**b).collect();
        submenus.push(Submenu::with_items(app, *title, true, &refs)?);
    }
    let refs: Vec<&dyn IsMenuItem<R>> = submenus.iter().map(|s| s as &dyn IsMenuItem<R>).collect();
    Menu::with_items(app, &refs)
}

/// One item: the platform's own editing items where they work (macOS, Windows); on
/// Linux those draw a label and do nothing when clicked (or are greyed out), so there
/// the Edit items are ours and run WebKit's editing commands ([`on_event`]).
fn native<R: Runtime>(app: &AppHandle<R>, e: &Entry) -> tauri::Result<Box<dyn IsMenuItem<R>>> {
    let Entry::Item {
        id,
        label,
        keys,
        does,
    } = *e
    else {
        unreachable!("only items")
    };
    if does == Edit && !cfg!(target_os = "linux") {
        let text = Some(label);
        return Ok(Box::new(match id {
            "undo" => PredefinedMenuItem::undo(app, text)?,
            "redo" => PredefinedMenuItem::redo(app, text)?,
            "cut" => PredefinedMenuItem::cut(app, text)?,
            "copy" => PredefinedMenuItem::copy(app, text)?,
            "paste" => PredefinedMenuItem::paste(app, text)?,
            _ => PredefinedMenuItem::select_all(app, text)?,
        }));
    }
    Ok(Box::new(MenuItem::with_id(app, id, label, true, keys)?))
}

fn about<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<PredefinedMenuItem<R>> {
    let meta = AboutMetadata {
        name: Some("Sandalyst".into()),
        version: Some(env!("CARGO_PKG_VERSION").into()),
        comments: Some(env!("CARGO_PKG_DESCRIPTION").into()),
        license: Some(env!("CARGO_PKG_LICENSE").into()),
        icon: app.default_window_icon().cloned(),
        ..Default::default()
    };
    PredefinedMenuItem::about(app, Some("About Sandalyst"), Some(meta))
}

/// The zoom steps, as browsers have them.
const ZOOMS: &[f64] = &[0.67, 0.75, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 1.75, 2.0];

/// The next zoom step from `now` (`up` or down), kept within [`ZOOMS`].
pub fn zoom_step(now: f64, up: bool) -> f64 {
    if up {
        ZOOMS
            .iter()
            .copied()
            .find(|z| *z > now + 1e-6)
            .unwrap_or(2.0)
    } else {
        ZOOMS
            .iter()
            .rev()
            .copied()
            .find(|z| *z < now - 1e-6)
            .unwrap_or(ZOOMS[0])
    }
}

/// A click on a menu item or its keys.
pub fn on_event<R: Runtime>(app: &AppHandle<R>, event: MenuEvent) {
    let id = event.id().as_ref();
    let Some(Entry::Item { id, does, .. }) = find(id) else {
        return;
    };
    tracing::debug!(item = id, "menu");
    match does {
        Does::Page => {
            let _ = app.emit_to("main", EVENT, *id);
        }
        Does::Shell if *id == "quit" => app.exit(0),
        Does::Shell => zoom(app, id),
        Does::Edit => edit(app, id),
    }
}

/// View's zoom items; the zoom is kept with the window's state.
fn zoom<R: Runtime>(app: &AppHandle<R>, id: &str) {
    let Some(w) = app.get_webview_window("main") else {
        return;
    };
    let now = crate::window_state::zoom(app);
    let z = match id {
        "zoom-in" => zoom_step(now, true),
        "zoom-out" => zoom_step(now, false),
        _ => 1.0,
    };
    if w.set_zoom(z).is_ok() {
        crate::window_state::zoomed(app, z);
    }
}

/// WebKit's own editing command on the focused field: what the keys do there.
#[cfg(target_os = "linux")]
fn edit<R: Runtime>(app: &AppHandle<R>, id: &str) {
    let command = match id {
        "undo" => "Undo",
        "redo" => "Redo",
        "cut" => "Cut",
        "copy" => "Copy",
        "paste" => "Paste",
        _ => "SelectAll",
    };
    if let Some(w) = app.get_webview_window("main") {
        let _ = w.with_webview(move |wv| {
            use webkit2gtk::WebViewExt;
            wv.inner().execute_editing_command(command);
        });
    }
}

/// The platform's own items do it (see [`native`]).
#[cfg(not(target_os = "linux"))]
fn edit<R: Runtime>(_app: &AppHandle<R>, _id: &str) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_menus_have_the_expected_items_and_keys() {
        let titles: Vec<&str> = MENUS.iter().map(|(t, _)| *t).collect();
        assert_eq!(titles, ["File", "Edit", "View", "Help"]);
        let want = [
            ("new-session", "Ctrl+N"),
            ("add-files", "Ctrl+O"),
            ("export", "Ctrl+E"),
            ("settings", "Ctrl+,"),
            ("quit", "Ctrl+Q"),
            ("undo", "Ctrl+Z"),
            ("redo", "Ctrl+Shift+Z"),
            ("cut", "Ctrl+X"),
            ("copy", "Ctrl+C"),
            ("paste", "Ctrl+V"),
            ("select-all", "Ctrl+A"),
            ("toggle-explorer", "Ctrl+Shift+E"),
            ("toggle-plots", "Ctrl+Shift+P"),
            ("zoom-in", "Ctrl+="),
            ("zoom-out", "Ctrl+-"),
            ("zoom-reset", "Ctrl+0"),
            ("shortcuts", "F1"),
        ];
        let got: Vec<(&str, String)> = keys_for(false)
            .into_iter()
            .map(|k| (k.id, k.keys))
            .collect();
        let want: Vec<(&str, String)> = want.iter().map(|(i, k)| (*i, k.to_string())).collect();
        assert_eq!(got, want);
        // macOS writes Cmd; no key is bound twice.
        assert!(keys_for(true).iter().all(|k| !k.keys.contains("Ctrl")));
        let mut all: Vec<String> = keys_for(false).into_iter().map(|k| k.keys).collect();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), want.len());
        // Open logs folder has no keys but is an item the page runs; About is the platform's.
        assert!(matches!(
            find("open-logs"),
            Some(Entry::Item {
                does: Does::Page,
                keys: None,
                ..
            })
        ));
        assert!(MENUS[3].1.iter().any(|e| matches!(e, Entry::About)));
        // Check for Updates… is the page's: it shows what the feed offers in the window.
        assert!(matches!(
            find("check-updates"),
            Some(Entry::Item {
                does: Does::Page,
                keys: None,
                label: "Check for Updates…",
                ..
            })
        ));
    }

    #[test]
    fn the_menu_is_built_and_every_accelerator_parses() {
        // Building parses each accelerator and fails on one it cannot read.
        let app = tauri::test::mock_app();
        let menu = build(app.handle()).unwrap();
        let items = menu.items().unwrap();
        let titles: Vec<String> = items
            .iter()
            .filter_map(|i| i.as_submenu().map(|s| s.text().unwrap()))
            .collect();
        #[cfg(not(target_os = "macos"))]
        assert_eq!(titles, ["File", "Edit", "View", "Help"]);
        #[cfg(target_os = "macos")]
        assert_eq!(titles, ["Sandalyst", "File", "Edit", "View", "Help"]);
        let file = items
            .iter()
            .find_map(|i| {
                i.as_submenu()
                    .filter(|s| s.text().unwrap() == "File")
                    .cloned()
            })
            .unwrap();
        let ids: Vec<String> = file
            .items()
            .unwrap()
            .iter()
            .filter_map(|i| i.as_menuitem().map(|m| m.id().0.clone()))
            .collect();
        assert!(
            ids.starts_with(&["new-session".into(), "add-files".into(), "export".into()]),
            "{ids:?}"
        );
    }

    #[test]
    fn on_macos_settings_quit_and_about_leave_file_and_help_for_the_application_menu() {
        let ids = |menu: usize, mac: bool| -> Vec<&str> {
            shown(MENUS[menu].1, mac)
                .iter()
                .map(|e| match e {
                    Entry::Item { id, .. } => *id,
                    Entry::Separator => "-",
                    Entry::About => "about",
                })
                .collect()
        };
        assert_eq!(ids(0, true), ["new-session", "add-files", "export"]);
        assert_eq!(ids(3, true), ["shortcuts", "open-logs"]);
        assert_eq!(
            ids(0, false),
            [
                "new-session",
                "add-files",
                "export",
                "-",
                "settings",
                "-",
                "quit"
            ]
        );
        assert_eq!(
            ids(3, false),
            ["shortcuts", "open-logs", "-", "check-updates", "about"]
        );
    }

    #[test]
    fn zoom_steps_up_and_down_and_stays_within_bounds() {
        assert_eq!(zoom_step(1.0, true), 1.1);
        assert_eq!(zoom_step(1.0, false), 0.9);
        assert_eq!(zoom_step(2.0, true), 2.0);
        assert_eq!(zoom_step(0.67, false), 0.67);
        assert_eq!(zoom_step(1.05, false), 1.0);
    }
}
