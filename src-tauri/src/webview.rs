//! WebKit settings for the window, chosen before it exists.
//!
//! Accelerated compositing costs the web process about 90 MB (its GL context; under
//! Xvfb, Mesa's software renderer) for a page that is text, tables and still images
//! with no animation to speak of. So it is off unless `SANDALYST_GPU=1` asks for it
//! (measured in BENCHMARKS.md, "The desktop app"). WebKitGTK reads the switch from the
//! environment when its web process starts (the `hardware-acceleration-policy` setting,
//! applied once the window exists, left the web process at 109 MB instead of 102).

/// Call at the very start of `main`, before any thread or window exists (the
/// environment is changed for this process and the WebKit processes it starts).
pub fn configure_before_start() {
    #[cfg(target_os = "linux")]
    if std::env::var_os("SANDALYST_GPU").is_none_or(|v| v != "1")
        && std::env::var_os("WEBKIT_DISABLE_COMPOSITING_MODE").is_none()
    {
        std::env::set_var("WEBKIT_DISABLE_COMPOSITING_MODE", "1");
    }
}
