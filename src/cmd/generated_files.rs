//! The files generated from the clap definition and committed: the shell completion scripts in
//! `completions/` and the man pages in `docs/man/`. The test fails when one is stale, missing or
//! left over from a removed subcommand; with `UPDATE_GENERATED=1` it rewrites them instead:
//!
//! ```text
//! UPDATE_GENERATED=1 cargo test --bin kubectl-deltas generated_files
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::{Command, CommandFactory, ValueEnum};
use clap_complete::{Generator, Shell};

use super::completion::{BIN_NAME, script};
use crate::cli::Cli;

const REGENERATE: &str = "UPDATE_GENERATED=1 cargo test --bin kubectl-deltas generated_files";

/// Every generated file by path relative to the repository, with its content.
fn generated() -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    for shell in Shell::value_variants() {
        let path = Path::new("completions").join(shell.file_name(BIN_NAME));
        files.insert(path, script(*shell));
    }
    for (name, page) in man_pages() {
        files.insert(Path::new("docs/man").join(name), page);
    }
    files
}

/// One page per visible command: `kubectl-deltas.1`, `kubectl-deltas-watch.1`, …
fn man_pages() -> Vec<(String, Vec<u8>)> {
    // The crate version alone: with the commit of `--version`, every commit would make the pages
    // stale.
    let version = env!("CARGO_PKG_VERSION");
    let mut root = Cli::command()
        .version(version)
        .disable_help_subcommand(true);
    root.build();
    let mut pages = Vec::new();
    add_pages(&root, &format!("{BIN_NAME} {version}"), &mut pages);
    pages
}

/// clap_mangen's sections, except that the text after the options (examples, exit codes) gets
/// sections of its own, laid out as in `--help` instead of filled into one paragraph.
fn add_pages(command: &Command, source: &str, pages: &mut Vec<(String, Vec<u8>)>) {
    let man = clap_mangen::Man::new(command.clone()).source(source);
    let mut page = Vec::new();
    let rendered = (|| -> std::io::Result<()> {
        man.render_title(&mut page)?;
        man.render_name_section(&mut page)?;
        man.render_synopsis_section(&mut page)?;
        man.render_description_section(&mut page)?;
        if command.get_arguments().any(|a| !a.is_hide_set()) {
            man.render_options_section(&mut page)?;
        }
        if command.get_subcommands().any(|s| !s.is_hide_set()) {
            man.render_subcommands_section(&mut page)?;
        }
        if let Some(after) = command.get_after_help() {
            page.extend(verbatim_sections(&after.to_string()).into_bytes());
        }
        if command.get_version().is_some() {
            man.render_version_section(&mut page)?;
        }
        Ok(())
    })();
    rendered.expect("rendering into memory");
    pages.push((man.get_filename(), page));
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        add_pages(sub, source, pages);
    }
}

/// Roff for a help text made of `Heading:` lines, each followed by lines kept as they are.
fn verbatim_sections(text: &str) -> String {
    let mut roff = String::new();
    let mut open = false;
    for line in text.lines() {
        if let Some(heading) = line.strip_suffix(':').filter(|_| !line.starts_with(' ')) {
            if open {
                roff.push_str(".fi\n");
            }
            roff.push_str(&format!(".SH \"{}\"\n.nf\n", heading.to_uppercase()));
            open = true;
            continue;
        }
        let escaped = line.replace('\\', "\\e").replace('-', "\\-");
        if escaped.starts_with(['.', '\'']) {
            roff.push_str("\\&");
        }
        roff.push_str(&escaped);
        roff.push('\n');
    }
    if open {
        roff.push_str(".fi\n");
    }
    roff
}

/// Generated files found in the repository: every file of the generated directories, so that a
/// page of a removed subcommand counts as stale.
fn committed(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    for dir in ["completions", "docs/man"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        for entry in entries.flatten() {
            let relative = Path::new(dir).join(entry.file_name());
            if is_generated_name(&relative) {
                files.insert(relative, std::fs::read(entry.path()).unwrap());
            }
        }
    }
    files
}

/// `completions/` also holds the hand-written `kubectl_complete-deltas`.
fn is_generated_name(path: &Path) -> bool {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    if path.starts_with("docs/man") {
        return name.ends_with(".1");
    }
    Shell::value_variants()
        .iter()
        .any(|shell| shell.file_name(BIN_NAME) == name)
}

#[test]
fn generated_files_are_fresh() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let wanted = generated();
    let found = committed(root);
    if std::env::var_os("UPDATE_GENERATED").is_some() {
        for path in found.keys().filter(|p| !wanted.contains_key(*p)) {
            std::fs::remove_file(root.join(path)).unwrap();
        }
        for (path, content) in &wanted {
            std::fs::create_dir_all(root.join(path).parent().unwrap()).unwrap();
            std::fs::write(root.join(path), content).unwrap();
        }
        return;
    }
    let mut stale = Vec::new();
    for (path, content) in &wanted {
        match found.get(path) {
            None => stale.push(format!("{} is missing", path.display())),
            Some(old) if old != content => stale.push(format!("{} is stale", path.display())),
            Some(_) => {}
        }
    }
    for path in found.keys().filter(|p| !wanted.contains_key(*p)) {
        stale.push(format!("{} is no longer generated", path.display()));
    }
    assert!(
        stale.is_empty(),
        "the generated files do not match the clap definition:\n  {}\nregenerate them with:\n  {REGENERATE}",
        stale.join("\n  ")
    );
}

#[test]
fn every_visible_command_has_a_man_page_and_hidden_ones_none() {
    let names: Vec<String> = man_pages().into_iter().map(|(name, _)| name).collect();
    for name in [
        "kubectl-deltas.1",
        "kubectl-deltas-watch.1",
        "kubectl-deltas-index.1",
        "kubectl-deltas-record.1",
        "kubectl-deltas-replay.1",
        "kubectl-deltas-completion.1",
    ] {
        assert!(
            names.contains(&name.to_owned()),
            "{name} missing: {names:?}"
        );
    }
    assert!(
        !names
            .iter()
            .any(|n| n.contains("complete.") || n.contains("help")),
        "{names:?}"
    );
}
