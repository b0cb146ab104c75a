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
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kubectl-deltas"));
    cmd.args(args)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .env_remove("KUBECONFIG")
        .env_remove("RUST_BACKTRACE")
        .env("NO_COLOR", "1");
    cmd
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

/// A running binary whose stdout is read line by line on a helper thread.
pub struct Running {
    child: Child,
    lines: mpsc::Receiver<String>,
    /// Every line read so far, each with its newline.
    pub stdout: String,
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
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Running {
            child,
            lines,
            stdout: String::new(),
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
        let mut stderr = String::new();
        if let Some(mut err) = self.child.stderr.take() {
            let _ = err.read_to_string(&mut stderr);
        }
        Ended {
            status,
            stdout: self.stdout,
            stderr,
        }
    }
}
