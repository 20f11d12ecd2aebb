//! Ctrl-C (SIGINT) and SIGTERM.
//!
//! The first signal asks the work to stop at the next chunk, so that
//! outputs are abandoned cleanly (temporary files removed, targets
//! untouched) and the process exits 130. If the work has not ended within
//! [`GRACE`] (it is blocked in `open` or `read`, on a FIFO without a
//! writer for example), or a second signal comes, the signal thread removes
//! every temporary file this process created (see
//! [`hydron_codec::save::remove_temp_files`]) and
//! exits 130 itself. SIGKILL cannot be caught and may leave a temporary
//! file behind.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::error::{Class, CliError};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// How long the work has, after the first signal, to stop by itself.
pub const GRACE: Duration = Duration::from_millis(500);

const MESSAGE: &str = "interrupted; no output was written";

/// Installs the handler (once, at start-up). If it cannot be installed,
/// signals keep their default action.
pub fn install() {
    // ctrlc runs this on its own thread, once per signal.
    let _ = ctrlc::set_handler(|| {
        if INTERRUPTED.swap(true, Ordering::SeqCst) {
            exit_now();
        }
        let _ = std::thread::Builder::new()
            .name("hydron-interrupt".into())
            .spawn(|| {
                std::thread::sleep(GRACE);
                exit_now();
            });
    });
}

/// Removes every temporary file and exits 130, keeping the registry locked
/// so that no file is created or renamed in between.
fn exit_now() -> ! {
    let _registry = hydron_codec::save::remove_temp_files();
    let _ = writeln!(std::io::stderr(), "hydron: error: {MESSAGE}");
    std::process::exit(i32::from(Class::Interrupted.code()));
}

/// An error if a stop was asked for; called between chunks.
pub fn check() -> Result<(), CliError> {
    if INTERRUPTED.load(Ordering::Relaxed) {
        Err(CliError::new(Class::Interrupted, MESSAGE))
    } else {
        Ok(())
    }
}
