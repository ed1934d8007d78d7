//! Running an external program without letting it hang llmgw.
//!
//! The program gets no stdin, runs in a process group of its own, and when
//! the timeout passes the whole group is killed. A wrapper script in front of
//! an engine may start a server (and its workers) instead of printing a
//! version; killing only the direct child would leave them running.

use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[derive(Debug)]
pub enum Ran {
    Exited {
        code: i32,
        stdout: String,
        stderr: String,
    },
    /// Ended by a signal that llmgw did not send.
    Signalled,
    TimedOut,
    NotStarted(std::io::Error),
}

pub fn run_bounded<S: AsRef<OsStr>>(program: &Path, args: &[S], path_env: Option<&OsStr>, timeout: Duration) -> Ran {
    let mut cmd = Command::new(program);
    cmd.args(args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0);
    if let Some(p) = path_env {
        cmd.env("PATH", p);
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return Ran::NotStarted(e),
    };
    // Read both pipes on their own threads so a chatty program cannot block
    // on a full pipe while llmgw waits for it to exit.
    let reader = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(p) = pipe {
                let _ = p.take(1 << 20).read_to_end(&mut buf);
            }
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let out = reader(child.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let err = reader(child.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let pgid = child.id() as libc::pid_t;
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() >= deadline => break None,
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(_) => break None,
        }
    };
    match status {
        Some(status) => {
            // The leader is gone; anything it left behind in its group goes too.
            // SAFETY: kill(2) with a negative pid signals a process group; it
            // touches no memory of ours.
            unsafe { libc::kill(-pgid, libc::SIGKILL) };
            let stdout = out.join().unwrap_or_default();
            let stderr = err.join().unwrap_or_default();
            match status.code() {
                Some(code) => Ran::Exited { code, stdout, stderr },
                None => Ran::Signalled,
            }
        }
        None => {
            // SAFETY: as above.
            unsafe { libc::kill(-pgid, libc::SIGKILL) };
            let _ = child.wait();
            // The reader threads end when the killed group's pipes close;
            // they are not joined, so a process that escaped the group by
            // starting a session of its own cannot hold llmgw up.
            Ran::TimedOut
        }
    }
}
