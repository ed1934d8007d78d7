//! Running an external program without letting it hang llmgw.
//!
//! The program gets no stdin, runs in a process group of its own, and when
//! the timeout passes the whole group is killed. A wrapper script in front of
//! an engine may start a server (and its workers) instead of printing a
//! version; killing only the direct child would leave them running. A
//! process that leaves the group (`setsid`) can still hold the output pipes
//! open, so they are read only until the deadline, or briefly after the
//! program exits: never until whoever holds them lets go.

use std::ffi::OsStr;
use std::io::Read;
use std::os::fd::OwnedFd;
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

/// What is kept of each stream.
const KEEP: usize = 1 << 20;
/// How long output is still read once the program has exited.
const AFTER_EXIT: Duration = Duration::from_millis(200);

/// One output pipe, read without blocking.
struct Pipe {
    file: std::fs::File,
    kept: Vec<u8>,
    open: bool,
}

impl Pipe {
    fn new(fd: OwnedFd) -> Pipe {
        // Non-blocking, so a read returns what is there instead of waiting
        // on whoever holds the other end. Should it fail, the pipe is
        // treated as closed rather than risk a read that never returns.
        let open = rustix::io::ioctl_fionbio(&fd, true).is_ok();
        Pipe { file: std::fs::File::from(fd), kept: Vec::new(), open }
    }

    /// Reads what is there now; end of file closes the pipe.
    fn drain(&mut self) {
        let mut buf = [0u8; 8192];
        loop {
            match self.file.read(&mut buf) {
                Ok(0) => {
                    self.open = false;
                    return;
                }
                Ok(n) => {
                    let room = KEEP.saturating_sub(self.kept.len());
                    self.kept.extend_from_slice(&buf[..n.min(room)]);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return,
                Err(_) => {
                    self.open = false;
                    return;
                }
            }
        }
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.kept).into_owned()
    }
}

/// Waits up to `wait` for output on the open pipes and reads what came.
fn poll_pipes(pipes: &mut [&mut Pipe], wait: Duration) {
    use rustix::event::{PollFd, PollFlags, Timespec};
    let mut open: Vec<&mut &mut Pipe> = pipes.iter_mut().filter(|p| p.open).collect();
    if open.is_empty() {
        std::thread::sleep(wait);
        return;
    }
    let wait = wait.clamp(Duration::from_millis(1), Duration::from_secs(1));
    let timeout = Timespec::try_from(wait).unwrap_or(Timespec { tv_sec: 1, tv_nsec: 0 });
    {
        let mut fds: Vec<PollFd<'_>> = open.iter().map(|p| PollFd::new(&p.file, PollFlags::IN)).collect();
        // An error (EINTR) only means looking again sooner.
        let _ = rustix::event::poll(&mut fds, Some(&timeout));
    }
    for p in &mut open {
        p.drain();
    }
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
    // The child leads its own group (process_group(0)): its pid is the group's.
    let pgid = rustix::process::Pid::from_child(&child);
    let kill_group = || {
        let _ = rustix::process::kill_process_group(pgid, rustix::process::Signal::KILL);
    };
    let (Some(out), Some(err)) = (child.stdout.take(), child.stderr.take()) else {
        kill_group();
        let _ = child.wait();
        return Ran::NotStarted(std::io::Error::other("no pipes to the program"));
    };
    let (mut out, mut err) = (Pipe::new(out.into()), Pipe::new(err.into()));
    let deadline = Instant::now() + timeout;
    let mut stop_reading = deadline;
    let mut status = None;
    loop {
        if status.is_none() {
            match child.try_wait() {
                Ok(Some(s)) => {
                    status = Some(s);
                    // The leader is gone; anything it left behind in its group goes too.
                    kill_group();
                    stop_reading = Instant::now() + AFTER_EXIT;
                }
                Ok(None) => {}
                Err(_) => break,
            }
        }
        let now = Instant::now();
        let closed = !out.open && !err.open;
        if (status.is_some() && (closed || now >= stop_reading)) || now >= deadline {
            break;
        }
        poll_pipes(&mut [&mut out, &mut err], (stop_reading - now).min(Duration::from_millis(10)));
    }
    match status {
        // The pipes are dropped unread from here: a process that escaped
        // the group and still holds them cannot hold llmgw up.
        None => {
            kill_group();
            let _ = child.wait();
            Ran::TimedOut
        }
        Some(s) => match s.code() {
            Some(code) => Ran::Exited { code, stdout: out.text(), stderr: err.text() },
            None => Ran::Signalled,
        },
    }
}
