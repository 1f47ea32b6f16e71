//! Progress bars on stderr for the report's sections and long renders.
//!
//! They are drawn only when stderr is a terminal: in CI logs and in tests, where stderr is a pipe or a
//! file, every bar is hidden and prints nothing, so the logs hold only the report itself.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::Duration;

/// Where bars draw: stderr when it is a terminal, nowhere otherwise.
///
/// `ProgressDrawTarget::stderr()` already hides itself when stderr is not a terminal; the explicit check
/// makes that independent of indicatif's own detection.
pub fn target() -> ProgressDrawTarget {
    if std::io::stderr().is_terminal() {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    }
}

/// A bar of `steps` steps that shows its position, the elapsed time and a message naming the current
/// step, ticking on its own so that it moves during long steps.
pub fn bar(steps: u64) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(steps), target());
    let style =
        ProgressStyle::with_template("{spinner} [{elapsed}] {bar:24} {pos}/{len} {wide_msg}")
            .expect("a valid template")
            .progress_chars("=> ");
    bar.set_style(style);
    if !bar.is_hidden() {
        bar.enable_steady_tick(Duration::from_millis(120));
    }
    bar
}

/// Prints a line to stderr above the bar (or plainly when the bar is hidden).
///
/// `ProgressBar::println` prints nothing when the bar is hidden, so messages that must reach the log,
/// such as a skipped row, go through this instead.
pub fn note(bar: &ProgressBar, line: &str) {
    bar.suspend(|| eprintln!("{line}"));
}
