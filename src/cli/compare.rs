//! `--compare A,B[,C…]`: the stacks that run side by side on one stream, each written as a
//! `+`-separated list of terms.
//!
//! A term is a client-go version (`1.32`, `0.35.1`, `latest`, as `--client-go` takes it), an
//! override of what that version sets, named as the informer's flag without its dashes
//! (`fifo=real`, `batch-pop=1`, `legacy-sync`, `unlock-while-processing=false`, `watch-list`),
//! or a change to every `--controller` (`queue=priority`, `runtime=kube`). A stack takes the command line's
//! flags and changes only what its terms name, so `--compare 1.32,latest` runs the same handlers
//! and controllers on two client-go versions. Syntax is checked here; what a stack means with
//! the rest of the command line is the plan's (`cmd/plan/refuse.rs`).

use super::{ControllerQueueKind, ControllerRuntimeKind, FifoKind, InformerArgs};

/// One stack of `--compare`, as typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StackArg {
    /// What the user typed: how rows, JSON lines and verdicts name the stack.
    pub label: String,
    /// The client-go version, if a term names one.
    pub client_go: Option<String>,
    /// `fifo=`.
    pub fifo: Option<FifoKind>,
    /// `batch-pop=`.
    pub batch_pop: Option<u32>,
    /// `legacy-sync[=BOOL]`.
    pub legacy_sync: Option<bool>,
    /// `unlock-while-processing[=BOOL]`.
    pub unlock_while_processing: Option<bool>,
    /// `watch-list[=BOOL]`.
    pub watch_list: Option<bool>,
    /// Changes made to every `--controller`, in the order given.
    pub controllers: Vec<ControllerChangeArg>,
}

/// A term that changes every `--controller` of a stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ControllerChangeArg {
    /// `queue=workqueue|priority`.
    Queue(ControllerQueueKind),
    /// `runtime=client-go|kube`.
    Runtime(ControllerRuntimeKind),
}

impl StackArg {
    /// The command line's informer flags with this stack's terms applied over them.
    pub fn informer_args(&self, base: &InformerArgs) -> InformerArgs {
        InformerArgs {
            client_go: self.client_go.clone().or_else(|| base.client_go.clone()),
            fifo: self.fifo.or(base.fifo),
            batch_pop: self.batch_pop.or(base.batch_pop),
            legacy_sync: self.legacy_sync.or(base.legacy_sync),
            unlock_while_processing: self
                .unlock_while_processing
                .or(base.unlock_while_processing),
            ..base.clone()
        }
    }

    /// `--watch-list` (`base`, where the command has it) with this stack's term over it.
    pub fn watch_list(&self, base: Option<bool>) -> Option<bool> {
        self.watch_list.or(base)
    }
}

/// The stacks of `--compare`, in the order given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stacks(pub Vec<StackArg>);

/// What a term may be, for messages.
const TERMS: &str = "a client-go version (1.32, 0.35.1, latest), fifo=delta|real|atomic|plain, \
                     batch-pop=N, legacy-sync[=BOOL], unlock-while-processing[=BOOL], \
                     watch-list[=BOOL], queue=workqueue|priority or runtime=client-go|kube";

/// Parses `--compare`: stacks separated by `,`, each terms separated by `+`.
pub fn parse_stacks(text: &str) -> Result<Stacks, String> {
    text.split(',')
        .map(parse_stack)
        .collect::<Result<_, _>>()
        .map(Stacks)
}

fn parse_stack(text: &str) -> Result<StackArg, String> {
    let label = text.trim();
    if label.is_empty() {
        return Err(format!(
            "an empty stack: give stacks separated by commas, each {TERMS}, joined by + \
             (e.g. 1.32,latest or 1.35,1.35+fifo=delta)"
        ));
    }
    let mut stack = StackArg {
        label: label.to_owned(),
        client_go: None,
        fifo: None,
        batch_pop: None,
        legacy_sync: None,
        unlock_while_processing: None,
        watch_list: None,
        controllers: Vec::new(),
    };
    let mut seen: Vec<&str> = Vec::new();
    for term in label.split('+').map(str::trim) {
        let (name, value) = match term.split_once('=') {
            Some((name, value)) => (name.trim(), Some(value.trim())),
            None => (term, None),
        };
        let is_version = value.is_none() && starts_like_a_version(name);
        let key = if is_version { "version" } else { name };
        if seen.contains(&key) {
            return Err(format!(
                "stack {label:?} gives {} twice: give each once",
                if is_version { "a version" } else { name }
            ));
        }
        seen.push(key);
        let boolean = |value: Option<&str>| match value {
            None => Ok(true),
            Some(v) => v.parse::<bool>().map_err(|_| {
                format!("{name}={v:?} in stack {label:?} is not a boolean: give true or false")
            }),
        };
        match name {
            _ if is_version => stack.client_go = Some(name.to_owned()),
            "fifo" => {
                stack.fifo = Some(match value.unwrap_or_default() {
                    "delta" => FifoKind::Delta,
                    "real" => FifoKind::Real,
                    "atomic" => FifoKind::Atomic,
                    "plain" => FifoKind::Plain,
                    other => {
                        return Err(format!(
                            "fifo={other:?} in stack {label:?}: expected delta, real, atomic or \
                             plain"
                        ));
                    }
                });
            }
            "batch-pop" => {
                let value = value.unwrap_or_default();
                match value.parse::<u32>() {
                    Ok(n) if n >= 1 => stack.batch_pop = Some(n),
                    _ => {
                        return Err(format!(
                            "batch-pop={value:?} in stack {label:?} is not a number from 1"
                        ));
                    }
                }
            }
            "legacy-sync" => stack.legacy_sync = Some(boolean(value)?),
            "unlock-while-processing" => stack.unlock_while_processing = Some(boolean(value)?),
            "watch-list" => stack.watch_list = Some(boolean(value)?),
            "queue" => {
                let queue = match value.unwrap_or_default() {
                    "workqueue" => ControllerQueueKind::Workqueue,
                    "priority" => ControllerQueueKind::Priority,
                    other => {
                        return Err(format!(
                            "queue={other:?} in stack {label:?}: expected workqueue or priority"
                        ));
                    }
                };
                stack.controllers.push(ControllerChangeArg::Queue(queue));
            }
            "runtime" => {
                let runtime = match value.unwrap_or_default() {
                    "client-go" => ControllerRuntimeKind::ClientGo,
                    "kube" => ControllerRuntimeKind::Kube,
                    other => {
                        return Err(format!(
                            "runtime={other:?} in stack {label:?}: expected client-go or kube"
                        ));
                    }
                };
                stack
                    .controllers
                    .push(ControllerChangeArg::Runtime(runtime));
            }
            _ => {
                return Err(format!(
                    "{term:?} in stack {label:?} is not a stack term: give {TERMS}, joined by +"
                ));
            }
        }
    }
    let kube =
        (stack.controllers).contains(&ControllerChangeArg::Runtime(ControllerRuntimeKind::Kube));
    let queue = (stack.controllers.iter()).any(|c| matches!(c, ControllerChangeArg::Queue(_)));
    if kube && queue {
        return Err(format!(
            "stack {label:?} gives queue= and runtime=kube: queue= is a client-go controller's, \
             and kube-runtime's scheduler has none; give one of them"
        ));
    }
    Ok(stack)
}

/// `1.32`, `v0.35.1`, `latest`: a term without `=` that names a version rather than a switch
/// (`legacy-sync`), which `--client-go`'s own parser then checks.
fn starts_like_a_version(term: &str) -> bool {
    term.eq_ignore_ascii_case("latest")
        || term
            .trim_start_matches(['v', 'V'])
            .starts_with(|c: char| c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_versions_overrides_and_controller_changes() {
        let Stacks(stacks) = parse_stacks("1.32, latest+fifo=delta ,queue=priority").unwrap();
        assert_eq!(stacks.len(), 3);
        assert_eq!(stacks[0].label, "1.32");
        assert_eq!(stacks[0].client_go.as_deref(), Some("1.32"));
        assert_eq!(stacks[1].label, "latest+fifo=delta");
        assert_eq!(stacks[1].client_go.as_deref(), Some("latest"));
        assert_eq!(stacks[1].fifo, Some(FifoKind::Delta));
        assert_eq!(stacks[2].client_go, None);
        assert_eq!(
            stacks[2].controllers,
            [ControllerChangeArg::Queue(ControllerQueueKind::Priority)]
        );
        let Stacks(stacks) = parse_stacks("v0.35.1+legacy-sync+batch-pop=1").unwrap();
        assert_eq!(stacks[0].client_go.as_deref(), Some("v0.35.1"));
        assert_eq!(stacks[0].legacy_sync, Some(true));
        assert_eq!(stacks[0].batch_pop, Some(1));
    }

    #[test]
    fn refuses_what_is_no_stack() {
        for (text, says) in [
            ("1.32,", "an empty stack"),
            ("1.32+1.35", "gives a version twice"),
            ("fifo=fast", "expected delta, real"),
            ("speed=2", "is not a stack term"),
            ("legacy-sync=yes", "is not a boolean"),
            ("batch-pop=0", "is not a number from 1"),
        ] {
            let error = parse_stacks(text).unwrap_err();
            assert!(error.contains(says), "{text}: {error}");
        }
    }

    #[test]
    fn a_stack_changes_only_what_it_names() {
        let base = InformerArgs {
            client_go: Some("1.28".into()),
            fifo: Some(FifoKind::Real),
            indices: vec!["namespace".into()],
            ..InformerArgs::default()
        };
        let Stacks(stacks) = parse_stacks("legacy-sync,1.35").unwrap();
        let first = stacks[0].informer_args(&base);
        assert_eq!(first.client_go.as_deref(), Some("1.28"));
        assert_eq!(first.legacy_sync, Some(true));
        assert_eq!(first.indices, base.indices);
        let second = stacks[1].informer_args(&base);
        assert_eq!(second.client_go.as_deref(), Some("1.35"));
        assert_eq!(second.fifo, Some(FifoKind::Real));
    }
}
