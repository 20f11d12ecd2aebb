//! Ctrl-C (SIGINT) and SIGTERM: the first one asks the work to stop at the
//! next chunk, so that outputs are abandoned cleanly (temporary files
//! removed, targets untouched); a second one exits at once.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::{Class, CliError};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Installs the handler (once, at start-up). If it cannot be installed,
/// signals keep their default action.
pub fn install() {
    let _ = ctrlc::set_handler(|| {
        if INTERRUPTED.swap(true, Ordering::SeqCst) {
            std::process::exit(i32::from(Class::Interrupted.code()));
        }
    });
}

/// An error if a stop was asked for; called between chunks.
pub fn check() -> Result<(), CliError> {
    if INTERRUPTED.load(Ordering::Relaxed) {
        Err(CliError::new(
            Class::Interrupted,
            "interrupted; no output was written",
        ))
    } else {
        Ok(())
    }
}
