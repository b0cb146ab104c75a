//! Running the `kubectl-deltas` binary (or a shell pipeline around it) as a child process: to its
//! end, or step by step, reading its output line by line while the test changes the fake API
//! server. One mechanism for all of it, [`Running`]: helper threads read stdout and stderr while
//! the child runs (a child that fills a pipe never blocks on it), and every wait has a deadline
//! ([`PATIENCE`]) at which the child is killed and the test fails with what it printed so far.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

/// Generous: only there so that a broken test fails instead of hanging.
pub const PATIENCE: Duration = Duration::from_secs(30);

/// The binary under test. Cargo gives its path to tests, not to examples: the recordings generator
/// (`tests/tools`, built as an example in `target/<profile>/examples/`) finds it in its profile's
/// directory, where it builds it first.
pub fn program() -> PathBuf {
    match option_env!("CARGO_BIN_EXE_kubectl-deltas") {
        Some(path) => PathBuf::from(path),
        None => {
            let exe = std::env::current_exe().expect("the running program's path");
            let profile_dir = exe
                .parent()
                .and_then(Path::parent)
                .expect("a target directory");
            profile_dir.join("kubectl-deltas")
        }
    }
}

/// The binary with `args` and `--kubeconfig`, colours off, no inherited kubeconfig or backtraces.
pub fn command(kubeconfig: &Path, args: &[&str]) -> Command {
    let mut cmd = offline_command(args);
    cmd.arg("--kubeconfig").arg(kubeconfig);
    cmd
}

/// The binary with `args` and no cluster (`replay`, `index --replay`): colours off, times in
/// UTC, tables as wide as without a terminal, no inherited kubeconfig or backtraces, and no
/// discovery cache (see [`NO_CACHE_DIR`]).
pub fn offline_command(args: &[&str]) -> Command {
    let mut cmd = Command::new(program());
    cmd.args(args)
        .env_remove("KUBECONFIG")
        .env_remove("RUST_BACKTRACE")
        .env_remove("COLUMNS")
        .env("KUBECACHEDIR", NO_CACHE_DIR)
        .env("NO_COLOR", "1")
        .env("TZ", "UTC");
    cmd
}

/// The discovery cache directory of every test that does not ask for one (with `--cache-dir`
/// or a `KUBECACHEDIR` of its own): a path under a file, which can be neither read nor created,
/// so each run discovers afresh (fake servers reuse ports, and one's cache must not answer for
/// another) and the user's `~/.kube/cache` is never touched.
pub const NO_CACHE_DIR: &str = "/dev/null/kubectl-deltas-tests-have-no-discovery-cache";

/// Runs `cmd` to its end with no input, capturing stdout and stderr; blocks the calling thread.
pub fn output_blocking(cmd: Command) -> Output {
    Running::start(cmd).finish()
}

/// [`output_blocking`] without blocking the runtime that serves the fake API server.
pub async fn output(cmd: Command) -> Output {
    tokio::task::spawn_blocking(move || output_blocking(cmd))
        .await
        .expect("the waiting thread")
}

/// Runs the binary against the cluster of `kubeconfig` to its end.
pub async fn run(kubeconfig: impl AsRef<Path>, args: &[&str]) -> Output {
    output(command(kubeconfig.as_ref(), args)).await
}

/// Runs the binary offline to its end, with `stdin` as its standard input.
pub async fn run_offline(args: &[&str], stdin: Option<Vec<u8>>) -> Output {
    let mut cmd = offline_command(args);
    let Some(bytes) = stdin else {
        return output(cmd).await;
    };
    tokio::task::spawn_blocking(move || {
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut bin = Running::with_stdio(cmd);
        let mut pipe = bin.take_stdin();
        // A binary that stops reading early must not make the test fail here.
        std::thread::spawn(move || {
            let _ = pipe.write_all(&bytes);
        });
        bin.finish()
    })
    .await
    .expect("the waiting thread")
}

/// Every line of `stdout` parsed as JSON.
pub fn json_lines(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The lines of stderr that are the tool's, without clap's `--help` hint and its list of
/// possible values.
pub fn error_lines(output: &Output) -> Vec<String> {
    stderr(output)
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with("For more information"))
        .filter(|l| !l.starts_with("  [possible values"))
        .map(str::to_owned)
        .collect()
}

/// `output` is a usage error as the tool makes one: exit 2, nothing on stdout, one sentence on
/// one line of stderr that says `says`, and no panic. `case` names the input in a failure.
#[track_caller]
pub fn assert_usage_sentence(output: &Output, case: &str, says: &str) {
    let err = stderr(output);
    assert_eq!(output.status.code(), Some(2), "{case}: {err}");
    assert!(output.stdout.is_empty(), "{case}: stdout");
    let lines = error_lines(output);
    assert_eq!(lines.len(), 1, "{case}: {err}");
    assert!(lines[0].contains(says), "{case}: {err}");
    assert!(!err.contains("panicked"), "{case}: {err}");
}

/// A running child whose piped stdout and stderr are read line by line on helper threads. Its
/// methods block: call them from `block_in_place` or a blocking thread. Dropped before its end
/// (a test that failed), the child is killed.
pub struct Running {
    child: Child,
    /// The program and its arguments, for messages.
    what: String,
    stdout: Option<Pipe>,
    stderr: Option<Pipe>,
}

/// How a [`Running`] child ended, its output as text.
pub struct Ended {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Running {
    /// The binary against the cluster of `kubeconfig`, as [`Running::start`] starts it.
    pub fn spawn(kubeconfig: &Path, args: &[&str]) -> Running {
        Running::start(command(kubeconfig, args))
    }

    /// Starts `cmd` with no input and its stdout and stderr piped to this harness.
    pub fn start(mut cmd: Command) -> Running {
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        Running::with_stdio(cmd)
    }

    /// Starts `cmd` with the stdin, stdout and stderr its caller set (a file, a pipe of the
    /// test's own, `Stdio::piped()`); of those, the piped stdout and stderr are read here and a
    /// piped stdin is the caller's to [take](Running::take_stdin).
    pub fn with_stdio(mut cmd: Command) -> Running {
        let what = std::iter::once(cmd.get_program())
            .chain(cmd.get_args())
            .map(|a| a.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" ");
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("{what} does not start: {e}"));
        let stdout = child.stdout.take().map(Pipe::read);
        let stderr = child.stderr.take().map(Pipe::read);
        Running {
            child,
            what,
            stdout,
            stderr,
        }
    }

    /// The child's process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// The child's piped standard input; dropping it closes it.
    pub fn take_stdin(&mut self) -> ChildStdin {
        self.child.stdin.take().expect("a piped stdin")
    }

    /// Reads stdout lines until one satisfies `until`, and returns it (without its newline).
    /// Fails if none comes before the deadline or the end of stdout.
    pub fn read_until(&mut self, what: &str, until: impl Fn(&str) -> bool) -> String {
        self.read_pipe_until(Stream::Stdout, what, until)
    }

    /// [`read_until`](Running::read_until) for stderr.
    pub fn read_stderr_until(&mut self, what: &str, until: impl Fn(&str) -> bool) -> String {
        self.read_pipe_until(Stream::Stderr, what, until)
    }

    /// [`read_until`](Self::read_until), unless a line already read satisfies `until`.
    pub fn seen_or_read_until(&mut self, what: &str, until: impl Fn(&str) -> bool) {
        let seen = self.stdout.as_ref().expect("a piped stdout").text();
        if !seen.lines().any(&until) {
            self.read_until(what, until);
        }
    }

    /// Closes the reading end of stdout, as `| head` does once it has its lines: the child's
    /// next write to it fails. Returns once the pipe is closed.
    pub fn close_stdout(&mut self) {
        self.stdout.as_mut().expect("a piped stdout").close();
    }

    /// Sends `signal` (`INT`, `TERM`, `HUP`) to the child.
    pub fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args([&format!("-{signal}"), &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success(), "kill -{signal} {}", self.what);
    }

    /// Sends SIGINT (Ctrl-C) and waits for the end.
    pub fn interrupt(self) -> Ended {
        self.signal("INT");
        self.wait()
    }

    /// Waits for the child to exit and reads the rest of its output.
    pub fn wait(self) -> Ended {
        let out = self.finish();
        Ended {
            status: out.status,
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// Waits for the child to exit and reads the rest of its output, as bytes (of a stream that
    /// was not piped here, none).
    pub fn finish(mut self) -> Output {
        let deadline = Instant::now() + PATIENCE;
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("the child's status") {
                break status;
            }
            if Instant::now() > deadline {
                self.fail("did not exit");
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let mut output = Output {
            status,
            stdout: Vec::new(),
            stderr: Vec::new(),
        };
        for (stream, bytes) in [
            (Stream::Stdout, &mut output.stdout),
            (Stream::Stderr, &mut output.stderr),
        ] {
            let Some(pipe) = self.pipe(stream).as_mut() else {
                continue;
            };
            if !pipe.read_to_end(deadline) {
                self.fail("exited, but something it started kept its output open");
            }
            if let Some(pipe) = self.pipe(stream) {
                *bytes = std::mem::take(&mut pipe.read);
            }
        }
        output
    }

    fn read_pipe_until(
        &mut self,
        stream: Stream,
        what: &str,
        until: impl Fn(&str) -> bool,
    ) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let pipe = self.pipe(stream).as_mut().expect("a piped stream");
            match pipe.next_line(deadline) {
                Some(line) if until(&line) => return line,
                Some(_) => {}
                None => self.fail(&format!("printed no {stream:?} line with {what}")),
            }
        }
    }

    fn pipe(&mut self, stream: Stream) -> &mut Option<Pipe> {
        match stream {
            Stream::Stdout => &mut self.stdout,
            Stream::Stderr => &mut self.stderr,
        }
    }

    /// Kills the child (its whole process group if it leads one, as a shell pipeline started
    /// with `process_group(0)` does) and fails the test with what it printed so far.
    fn fail(&mut self, what: &str) -> ! {
        self.kill();
        let text = |pipe: &mut Option<Pipe>| {
            pipe.as_mut().map_or_else(String::new, |p| {
                p.drain();
                p.text()
            })
        };
        panic!(
            "{}: {what} within {PATIENCE:?}\n--- stdout so far:\n{}\n--- stderr so far:\n{}",
            self.what,
            text(&mut self.stdout),
            text(&mut self.stderr)
        );
    }

    fn kill(&mut self) {
        let pid = self.child.id() as libc::pid_t;
        // SAFETY: plain system calls on the pid of a child not yet reaped, so not reused.
        unsafe {
            if libc::getpgid(pid) == pid {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.kill();
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Stream {
    Stdout,
    Stderr,
}

/// A pipe from the child, read line by line (each line with its newline, if it has one) by a
/// helper thread until its end or until it is [closed](Pipe::close).
struct Pipe {
    lines: mpsc::Receiver<Vec<u8>>,
    closing: Arc<AtomicBool>,
    reader: Option<JoinHandle<()>>,
    /// Every byte received so far.
    read: Vec<u8>,
}

impl Pipe {
    fn read(input: impl Read + AsRawFd + Send + 'static) -> Pipe {
        let (tx, lines) = mpsc::channel();
        let closing = Arc::new(AtomicBool::new(false));
        let stop = Arc::clone(&closing);
        let reader = std::thread::spawn(move || {
            let fd = input.as_raw_fd();
            let mut input = BufReader::new(input);
            loop {
                if !wait_readable(fd, &input, &stop) {
                    return;
                }
                let mut line = Vec::new();
                match input.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {
                        if tx.send(line).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        Pipe {
            lines,
            closing,
            reader: Some(reader),
            read: Vec::new(),
        }
    }

    /// The next line without its newline, or `None` at the end of the pipe or the deadline.
    fn next_line(&mut self, deadline: Instant) -> Option<String> {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = self.lines.recv_timeout(left).ok()?;
        self.read.extend_from_slice(&line);
        let text = String::from_utf8_lossy(&line);
        Some(text.strip_suffix('\n').unwrap_or(&text).to_owned())
    }

    /// Receives every line up to the end of the pipe; false if the deadline comes first.
    fn read_to_end(&mut self, deadline: Instant) -> bool {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => self.read.extend_from_slice(&line),
                Err(RecvTimeoutError::Disconnected) => return true,
                Err(RecvTimeoutError::Timeout) => return false,
            }
        }
    }

    /// Receives the lines already read.
    fn drain(&mut self) {
        while let Ok(line) = self.lines.try_recv() {
            self.read.extend_from_slice(&line);
        }
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.read).into_owned()
    }

    fn close(&mut self) {
        self.closing.store(true, Ordering::Relaxed);
        if let Some(reader) = self.reader.take() {
            reader.join().expect("the pipe's reader");
        }
        self.drain();
    }
}

/// Waits until `fd` has something to read (or its end) or `stop` is set; false for `stop`. Wakes
/// every few milliseconds to look at `stop`, so that [`Pipe::close`] closes a pipe the child is
/// not writing to.
fn wait_readable<R>(fd: RawFd, input: &BufReader<R>, stop: &AtomicBool) -> bool {
    loop {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        if !input.buffer().is_empty() {
            return true;
        }
        let mut poll = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one pollfd for a descriptor the caller's reader owns and keeps open.
        if unsafe { libc::poll(&mut poll, 1, 10) } > 0 {
            return true;
        }
    }
}
