//! Reads a partial command line against the clap definition: which subcommand it is in, which
//! flags it has set, and what the last word is (a flag, a flag's value, a subcommand or a
//! positional argument). Walks clap's `Command` tree, so flags added to the CLI later complete
//! without changes here.

use std::collections::HashMap;

use clap::{Arg, Command};

/// A partial command line, read.
#[derive(Debug)]
pub struct Line<'a> {
    /// The deepest subcommand named on the line (the root when none is).
    pub command: &'a Command,
    /// The values given so far to flags, by the flag's long name; the last one wins.
    pub values: HashMap<&'a str, String>,
    /// The ids of the flags given so far.
    pub given: Vec<&'a str>,
    /// What the last word is.
    pub word: Word<'a>,
}

/// What the word under the cursor is.
#[derive(Debug, PartialEq)]
pub enum Word<'a> {
    /// A flag's name: it starts with `-`.
    Flag {
        /// The word so far.
        partial: String,
    },
    /// The value of `arg`: after `--flag`, or `--flag=…`, or `-f…`.
    Value {
        /// The flag.
        arg: &'a Arg,
        /// What a candidate value must be prefixed with to replace the whole word: `-o` for
        /// `-oj`. Empty after `--flag=`, where shells complete the part after `=` on their own,
        /// and for a separate word.
        prefix: String,
        /// The value so far.
        partial: String,
    },
    /// A subcommand name or the value of the positional argument at `index` of [`Line::command`].
    Positional {
        /// How many positional values precede this one.
        index: usize,
        /// The word so far.
        partial: String,
    },
}

impl<'a> Line<'a> {
    /// Reads `words`, the arguments after the program name, the last one being the word under the
    /// cursor (empty for a new word; no words at all means an empty new word). `root` must be
    /// built (`Command::build`) so that global flags are known to every subcommand.
    pub fn read(root: &'a Command, words: &[String]) -> Self {
        let (partial, done) = match words.split_last() {
            Some((last, done)) => (last.clone(), done),
            None => (String::new(), &[][..]),
        };
        let mut line = Line {
            command: root,
            values: HashMap::new(),
            given: Vec::new(),
            word: Word::Flag {
                partial: String::new(),
            },
        };
        let mut positionals = 0;
        let mut only_positionals = false;
        // The flag whose value is the next word.
        let mut pending: Option<&'a Arg> = None;
        for word in done {
            if let Some(arg) = pending.take() {
                line.set(arg, word);
            } else if only_positionals || !word.starts_with('-') || word == "-" {
                match line.command.find_subcommand(word) {
                    Some(sub) if positionals == 0 && !only_positionals => line.command = sub,
                    _ => positionals += 1,
                }
            } else if word == "--" {
                only_positionals = true;
            } else {
                pending = line.flag_word(word);
            }
        }
        line.word = match pending {
            Some(arg) => Word::Value {
                arg,
                prefix: String::new(),
                partial,
            },
            // A lone `-` (stdin, for some arguments) is also how one asks for the flags.
            None if only_positionals || !partial.starts_with('-') => Word::Positional {
                index: positionals,
                partial,
            },
            None => line.partial_flag(partial),
        };
        line
    }

    /// Records a complete flag word (`--flag`, `--flag=value`, `-abc`, `-ovalue`) and returns the
    /// flag whose value is the next word, if any.
    fn flag_word(&mut self, word: &str) -> Option<&'a Arg> {
        if let Some(long) = word.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (long, None),
            };
            let arg = self.long(name)?;
            return match value {
                Some(value) => {
                    self.set(arg, value);
                    None
                }
                // A value that must follow `=` (`--watch-list[=BOOL]`) is never the next word.
                None if takes_value(arg) && !arg.is_require_equals_set() => Some(arg),
                None => {
                    self.given.push(arg.get_id().as_str());
                    None
                }
            };
        }
        // A cluster of short flags: `-vvA`, `-nkube-system`, `-n=kube-system`.
        let shorts = &word[1..];
        for (at, c) in shorts.char_indices() {
            let arg = self.short(c)?;
            if !takes_value(arg) {
                self.given.push(arg.get_id().as_str());
                continue;
            }
            let rest = &shorts[at + c.len_utf8()..];
            let rest = rest.strip_prefix('=').unwrap_or(rest);
            if rest.is_empty() {
                return Some(arg);
            }
            self.set(arg, rest);
            return None;
        }
        None
    }

    /// The word under the cursor when it starts with `-`.
    fn partial_flag(&self, partial: String) -> Word<'a> {
        if let Some((name, value)) = partial
            .strip_prefix("--")
            .and_then(|long| long.split_once('='))
            && let Some(arg) = self.long(name).filter(|a| takes_value(a))
        {
            return Word::Value {
                arg,
                prefix: String::new(),
                partial: value.to_owned(),
            };
        }
        if !partial.starts_with("--")
            && let Some(c) = partial[1..].chars().next()
            && let Some(arg) = self.short(c).filter(|a| takes_value(a))
        {
            let rest = &partial[1 + c.len_utf8()..];
            if !rest.is_empty() {
                let (prefix, value) = match rest.strip_prefix('=') {
                    // Shells complete after `=`, as for `--flag=`.
                    Some(value) => (String::new(), value),
                    None => (format!("-{c}"), rest),
                };
                return Word::Value {
                    arg,
                    prefix,
                    partial: value.to_owned(),
                };
            }
        }
        Word::Flag { partial }
    }

    fn set(&mut self, arg: &'a Arg, value: &str) {
        self.given.push(arg.get_id().as_str());
        if let Some(long) = arg.get_long() {
            self.values.insert(long, value.to_owned());
        }
    }

    fn long(&self, name: &str) -> Option<&'a Arg> {
        self.command.get_arguments().find(|arg| {
            arg.get_long() == Some(name)
                || arg
                    .get_all_aliases()
                    .is_some_and(|aliases| aliases.contains(&name))
        })
    }

    fn short(&self, c: char) -> Option<&'a Arg> {
        self.command.get_arguments().find(|arg| {
            arg.get_short() == Some(c)
                || arg
                    .get_all_short_aliases()
                    .is_some_and(|aliases| aliases.contains(&c))
        })
    }

    /// The positional argument that takes the value at `index`, if any: the one declared at that
    /// place, or a last one that takes several values.
    pub fn positional(&self, index: usize) -> Option<&'a Arg> {
        let positionals: Vec<&'a Arg> = self.command.get_positionals().collect();
        positionals.get(index).copied().or_else(|| {
            positionals
                .last()
                .copied()
                .filter(|arg| arg.get_num_args().is_some_and(|n| n.max_values() > 1))
        })
    }
}

/// Whether the flag takes a value (`--output json`), as opposed to a switch (`--quiet`, `-v`).
pub fn takes_value(arg: &Arg) -> bool {
    arg.get_action().takes_values()
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;
    use crate::cli::Cli;

    fn read(words: &[&str], check: impl FnOnce(&Line)) {
        let mut root = Cli::command();
        root.build();
        let words: Vec<String> = words.iter().map(|w| w.to_string()).collect();
        check(&Line::read(&root, &words));
    }

    fn value_of<'a>(line: &'a Line) -> (&'a str, &'a str, &'a str) {
        match &line.word {
            Word::Value {
                arg,
                prefix,
                partial,
            } => (arg.get_id().as_str(), prefix.as_str(), partial.as_str()),
            other => panic!("not a value: {other:?}"),
        }
    }

    #[test]
    fn no_words_is_a_new_word_at_the_top() {
        read(&[], |line| {
            assert_eq!(line.command.get_name(), "kubectl-deltas");
            assert_eq!(
                line.word,
                Word::Positional {
                    index: 0,
                    partial: String::new()
                }
            );
        });
    }

    #[test]
    fn flag_values_in_every_spelling_are_recorded() {
        let words = [
            "-v",
            "watch",
            "--context=prod",
            "-nkube-system",
            "--kubeconfig",
            "/k",
            "-qA",
            "pods",
            "",
        ];
        read(&words, |line| {
            assert_eq!(line.command.get_name(), "watch");
            assert_eq!(line.values["context"], "prod");
            assert_eq!(line.values["namespace"], "kube-system");
            assert_eq!(line.values["kubeconfig"], "/k");
            for id in ["verbose", "quiet", "all_namespaces"] {
                assert!(line.given.contains(&id), "{id}: {:?}", line.given);
            }
            assert_eq!(
                line.word,
                Word::Positional {
                    index: 1,
                    partial: String::new()
                }
            );
        });
    }

    #[test]
    fn a_flag_whose_value_needs_an_equals_sign_leaves_the_next_word_alone() {
        read(&["watch", "--watch-list", ""], |line| {
            assert!(line.given.contains(&"watch_list"), "{:?}", line.given);
            assert_eq!(
                line.word,
                Word::Positional {
                    index: 0,
                    partial: String::new()
                }
            );
        });
        read(&["watch", "pods", "--legacy-sync=f"], |line| {
            assert_eq!(value_of(line), ("legacy_sync", "", "f"));
        });
    }

    #[test]
    fn the_word_under_the_cursor_can_be_a_flag_value_in_three_forms() {
        read(&["watch", "-o", "j"], |line| {
            assert_eq!(value_of(line), ("output", "", "j"));
        });
        read(&["watch", "--output=j"], |line| {
            assert_eq!(value_of(line), ("output", "", "j"));
        });
        read(&["watch", "-oj"], |line| {
            assert_eq!(value_of(line), ("output", "-o", "j"));
        });
        read(&["watch", "-n=kube"], |line| {
            assert_eq!(value_of(line), ("namespace", "", "kube"));
        });
    }

    #[test]
    fn after_a_double_dash_every_word_is_positional() {
        read(&["watch", "--", "-o", "-"], |line| {
            assert_eq!(
                line.word,
                Word::Positional {
                    index: 1,
                    partial: "-".to_owned()
                }
            );
        });
        read(&["watch", "-"], |line| {
            assert_eq!(
                line.word,
                Word::Flag {
                    partial: "-".to_owned()
                }
            );
        });
    }
}
