//! Reading input files: each exactly once, bounded in size; `-` is
//! standard input.
//!
//! Every diagnostic about a file points into the bytes that were parsed, so
//! a pipe or a file replaced while llmgw runs can never be read a second
//! time into something else (an empty fleet, say).

use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::diag::{Code, Diag};
use crate::source::{Source, source};

/// The default ceiling on one input file: 1 GiB.
pub const DEFAULT_MAX_INPUT_BYTES: u64 = 1 << 30;

static MAX_INPUT_BYTES: AtomicU64 = AtomicU64::new(DEFAULT_MAX_INPUT_BYTES);
static STDIN_TAKEN: AtomicBool = AtomicBool::new(false);

/// Sets the ceiling `--max-input-bytes` asks for, once, at start-up.
pub fn set_max_input_bytes(n: u64) {
    MAX_INPUT_BYTES.store(n, Ordering::Relaxed);
}

pub fn max_input_bytes() -> u64 {
    MAX_INPUT_BYTES.load(Ordering::Relaxed)
}

/// Reads one input file (`-`: standard input), refusing one over the size
/// ceiling, one that is not text, and a second read of standard input. A
/// pipe is read (`<(...)`, process substitution, names one); a FIFO no
/// one writes to is an empty file, never a wait.
pub fn read(path: &Path) -> Result<Source, Diag> {
    read_as(path, false)
}

/// As `read`, for a path another file names (a catalog's `config`): a
/// regular file only. A FIFO, a device or `/proc/self/fd/0` there is no
/// config.json, and reading one could wait forever or leak what it holds.
pub fn read_regular(path: &Path) -> Result<Source, Diag> {
    read_as(path, true)
}

/// Opens `path` for reading without waiting (opening a FIFO waits for a
/// writer), then reads it blocking, as any file.
fn open(path: &Path) -> std::io::Result<std::fs::File> {
    use rustix::fs::OFlags;
    let fd = rustix::fs::open(path, OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC, rustix::fs::Mode::empty())?;
    rustix::fs::fcntl_setfl(&fd, OFlags::empty())?;
    Ok(std::fs::File::from(fd))
}

fn read_as(path: &Path, regular_only: bool) -> Result<Source, Diag> {
    let stdin = path.as_os_str() == "-";
    let name = if stdin { "<stdin>".to_string() } else { path.display().to_string() };
    let limit = max_input_bytes();
    let cannot = |e: std::io::Error| {
        Diag::error(Code::Io, format!("cannot read {name}: {e}")).help("check the path and its permissions")
    };
    let mut reader: Box<dyn Read> = if stdin {
        if STDIN_TAKEN.swap(true, Ordering::SeqCst) {
            return Err(Diag::error(Code::Io, "standard input (`-`) is named twice")
                .help("standard input can be read only once; save it to a file to use it twice"));
        }
        Box::new(std::io::stdin().lock())
    } else {
        let file = open(path).map_err(cannot)?;
        let meta = file.metadata().map_err(cannot)?;
        if meta.is_dir() {
            return Err(Diag::error(Code::Io, format!("cannot read {name}: it is a directory"))
                .help("give a TOML, YAML or JSON file"));
        }
        if regular_only && !meta.is_file() {
            return Err(Diag::error(Code::Io, format!("cannot read {name}: it is not a regular file"))
                .help("a file another file names is read only when it is a regular file (no FIFO, device or socket)"));
        }
        if meta.is_file() && meta.len() > limit {
            return Err(too_large(&name, limit));
        }
        Box::new(file)
    };
    let mut bytes = Vec::new();
    let mut chunk = vec![0u8; 1 << 16];
    loop {
        let n = match reader.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(cannot(e)),
        };
        // No TOML, YAML or JSON file holds a NUL byte: stop at the first
        // one instead of reading on (`/dev/zero` never ends).
        // Nothing of what was read is shown: it was never parsed, and the
        // file may be anyone's (`/proc/self/environ` holds secrets).
        if let Some(at) = memchr::memchr(0, &chunk[..n]) {
            let offset = bytes.len() + at;
            return Err(Diag::error(
                Code::Syntax,
                format!("{name} holds a NUL byte at offset {offset}: it is not text"),
            )
            .help("catalogs and inventories are UTF-8 TOML, YAML or JSON"));
        }
        if (bytes.len() + n) as u64 > limit {
            return Err(too_large(&name, limit));
        }
        bytes.extend_from_slice(&chunk[..n]);
    }
    match String::from_utf8(bytes) {
        Ok(text) => Ok(source(&name, text)),
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            Err(Diag::error(Code::Syntax, format!("{name} is not UTF-8 text: an invalid byte at offset {at}"))
                .help("catalogs and inventories are UTF-8 TOML, YAML or JSON"))
        }
    }
}

fn too_large(name: &str, limit: u64) -> Diag {
    Diag::error(Code::TooLarge, format!("{name} is larger than {} bytes", limit)).help(format!(
        "llmgw reads at most {limit} bytes per file; if this file is meant, raise the limit with --max-input-bytes"
    ))
}
