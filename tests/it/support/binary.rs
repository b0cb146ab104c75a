//! Running the `kubectl-deltas` binary against the fake API server: to completion, or step by
//! step, reading its output line by line while the test changes the server.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

/// Generous: only there so that a broken test fails instead of hanging.
pub const PATIENCE: Duration = Duration::from_secs(30);

/// The binary with `args` and `--kubeconfig`, colours off, no inherited kubeconfig or backtraces.
pub fn command(kubeconfig: &Path, args: &[&str]) -> Command {
    let mut cmd = offline_command(args);
    cmd.arg("--kubeconfig").arg(kubeconfig);
    cmd
}

/// The binary with `args` and no cluster (`replay`, `index --replay`): colours off, times in
/// UTC, no inherited kubeconfig or backtraces, and no discovery cache (see [`NO_CACHE_DIR`]).
pub fn offline_command(args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kubectl-deltas"));
    cmd.args(args)
        .env_remove("KUBECONFIG")
        .env_remove("RUST_BACKTRACE")
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

/// Runs the binary offline to completion, with `stdin` as its standard input.
pub async fn run_offline(args: &[&str], stdin: Option<Vec<u8>>) -> Output {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut child = offline_command(&args)
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary starts");
        if let Some(bytes) = stdin {
            let mut pipe = child.stdin.take().unwrap();
            // A binary that stops reading early must not make the test fail here.
            std::thread::spawn(move || {
                let _ = std::io::Write::write_all(&mut pipe, &bytes);
            });
        }
        let out = std::thread::spawn(move || child.wait_with_output().unwrap());
        let deadline = Instant::now() + PATIENCE;
        while !out.is_finished() {
            assert!(
                Instant::now() < deadline,
                "the binary did not exit: {args:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        out.join().unwrap()
    })
    .await
    .unwrap()
}

/// Runs the binary to completion without blocking the runtime that serves the fake API server.
pub async fn run(kubeconfig: PathBuf, args: &[&str]) -> Output {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let output = tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut child = command(&kubeconfig, &args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary starts");
        let deadline = Instant::now() + PATIENCE;
        while child.try_wait().unwrap().is_none() {
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("the binary did not exit: {args:?}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        child.wait_with_output().unwrap()
    });
    output.await.unwrap()
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

/// A running binary whose stdout and stderr are read line by line on helper threads.
pub struct Running {
    child: Child,
    lines: mpsc::Receiver<String>,
    /// Every line read so far, each with its newline.
    pub stdout: String,
    err_lines: mpsc::Receiver<String>,
    /// Every stderr line read so far, each with its newline.
    pub stderr: String,
}

/// How a [`Running`] binary ended.
pub struct Ended {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Running {
    pub fn spawn(kubeconfig: &Path, args: &[&str]) -> Running {
        let mut child = command(kubeconfig, args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary starts");
        let lines = line_reader(child.stdout.take().unwrap());
        let err_lines = line_reader(child.stderr.take().unwrap());
        Running {
            child,
            lines,
            stdout: String::new(),
            err_lines,
            stderr: String::new(),
        }
    }

    /// [`read_until`](Running::read_until) for stderr.
    pub fn read_stderr_until(&mut self, what: &str, until: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.err_lines.recv_timeout(left) {
                Ok(line) => {
                    self.stderr.push_str(&line);
                    self.stderr.push('\n');
                    if until(&line) {
                        return line;
                    }
                }
                Err(_) => {
                    let _ = self.child.kill();
                    panic!(
                        "no stderr line with {what}; stderr so far:\n{}",
                        self.stderr
                    );
                }
            }
        }
    }

    /// Reads lines until one satisfies `until`, and returns it. Blocks: call it from
    /// `block_in_place` or a blocking thread.
    pub fn read_until(&mut self, what: &str, until: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.stdout.push_str(&line);
                    self.stdout.push('\n');
                    if until(&line) {
                        return line;
                    }
                }
                Err(_) => {
                    let _ = self.child.kill();
                    panic!("no line with {what}; output so far:\n{}", self.stdout);
                }
            }
        }
    }

    /// [`read_until`](Self::read_until), unless a line already read satisfies `until`.
    pub fn seen_or_read_until(&mut self, what: &str, until: impl Fn(&str) -> bool) {
        if !self.stdout.lines().any(&until) {
            self.read_until(what, until);
        }
    }

    /// Sends SIGINT (Ctrl-C) and waits for the end.
    pub fn interrupt(self) -> Ended {
        let status = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        self.wait()
    }

    /// Waits for the binary to exit and reads the rest of its output.
    pub fn wait(mut self) -> Ended {
        let deadline = Instant::now() + PATIENCE;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("the binary did not exit; output so far:\n{}", self.stdout);
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(5)) {
            self.stdout.push_str(&line);
            self.stdout.push('\n');
        }
        while let Ok(line) = self.err_lines.recv_timeout(Duration::from_secs(5)) {
            self.stderr.push_str(&line);
            self.stderr.push('\n');
        }
        Ended {
            status,
            stdout: self.stdout,
            stderr: self.stderr,
        }
    }
}

/// Sends each line `input` gives to the returned channel, from a helper thread, until its end.
fn line_reader(input: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(input).lines() {
            let Ok(line) = line else { return };
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    lines
}

/// Runs `cmd` to its end, reading its stdout and stderr while it runs (a child that fills a pipe
/// never blocks on it), without blocking the runtime that serves the fake API server; panics if
/// it outlives [`PATIENCE`].
pub async fn output(mut cmd: Command) -> Output {
    tokio::task::spawn_blocking(move || {
        let child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary starts");
        let pid = child.id().to_string();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(child.wait_with_output());
        });
        match rx.recv_timeout(PATIENCE) {
            Ok(out) => out.expect("the binary's output"),
            Err(_) => {
                let _ = Command::new("kill").args(["-KILL", &pid]).status();
                panic!("the binary did not exit: {cmd:?}");
            }
        }
    })
    .await
    .expect("the waiting thread")
}
