//! Progress bars on standard error, drawn only when it is a terminal.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A progress bar counting vectors, `len` of them if known. Hidden (and
/// nearly free) when standard error is not a terminal.
#[must_use]
pub fn vectors(len: Option<u64>, what: &'static str) -> ProgressBar {
    let target = ProgressDrawTarget::stderr();
    let (bar, template) = match len {
        Some(n) => (
            ProgressBar::with_draw_target(Some(n), target),
            "{msg:>9} [{elapsed_precise}] {wide_bar} {human_pos}/{human_len} vectors ({per_sec}, {eta} left)",
        ),
        None => (
            ProgressBar::with_draw_target(None, target),
            "{msg:>9} [{elapsed_precise}] {spinner} {human_pos} vectors ({per_sec})",
        ),
    };
    let style =
        ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar.set_message(what);
    bar
}
