//! `index`: build the informer cache once ([`one_shot`]), answer one Indexer
//! query from it, exit.
//!
//! Without `--value`: every value of the `--by` index with its object count (ListIndexFuncValues),
//! objects without a value counted under `<none>`. With `--value V…`: the objects under any of them
//! (ByIndex), or only their keys (IndexKeys) with `--keys-only`; `--value '*'` stands for every
//! value (ListIndexFuncValues, then ByIndex). Nothing matching, in every format, is nothing on
//! stdout and a note on stderr with exit 0, or an error with exit 4 with `--fail-empty`.

use std::io::{self, BufWriter, IsTerminal as _, Write as _};
use std::sync::Arc;
use std::time::SystemTime;

use anyhow::anyhow;
use kubectl_deltas::Object;
use kubectl_deltas::cache::{
    Consumption, IndexSpec, IndexerReader, Informer, InformerSink, NoSink,
};
use kubectl_deltas::query::{Matches, ValueListing};
use kubectl_deltas::render::count;
use kubectl_deltas::render::index::{IndexRenderer, write_keys};
use kubectl_deltas::render::printable;
use kubectl_deltas::source::discovery::Need;
use tokio_util::sync::CancellationToken;

use super::index_at::AtSink;
use super::informer::{
    profile, rediscovering_lister_watcher, reflector_config, reflector_failure_while,
};
use super::one_shot::RetryNotes;
use super::plan::refuse;
use super::{one_shot, replay, target};
use crate::cli::exit::{Exit, Failure, WithExit};
use crate::cli::profile::Profile;
use crate::cli::type_name::resource_and_name;
use crate::cli::{AccessArgs, IndexArgs, InformerArgs, ReflectorArgs};

pub fn run(args: IndexArgs) -> anyhow::Result<()> {
    let spec: IndexSpec = args.by.parse().exit_with(Exit::Usage)?;
    let (resource, name) = one_object(&args)?;
    let (informer_args, reflector_args) = (args.cache.informer(), args.cache.reflector());
    refuse::queue_flags(&informer_args)?;
    let profile = profile(&informer_args, &reflector_args)?;
    // `--by` may repeat an `--index`: one index serves both.
    let mut specs = refuse::index_specs(&informer_args)?;
    if !specs.contains(&spec) {
        specs.push(spec.clone());
    }
    refuse_specs_outside_metadata(&spec, &specs, reflector_args.metadata_only)?;
    // `--at` replays as `replay` does, popping on the replay's turns.
    let at = args.at.map(|bound| Arc::new(AtSink::new(bound)));
    let consumption = match at {
        Some(_) => Consumption::Inline,
        None => Consumption::Thread,
    };
    let config = profile.informer_config(&specs, consumption);
    // Retries while listing a cluster are noted on stderr; a recording's are history.
    let sink: Arc<dyn InformerSink> = match (&args.replay, &at) {
        (Some(_), Some(at)) => at.clone(),
        (Some(_), None) => Arc::new(NoSink),
        (None, _) => Arc::new(RetryNotes { notes: !args.quiet }),
    };
    let informer = Informer::new(config, sink, Arc::default(), CancellationToken::new());
    let runtime = super::runtime()?;
    // A recording's state is as of its last line, and its ages are told from then.
    let (scope, now) = match (&args.replay, resource.as_deref()) {
        (Some(file), resource) => {
            let recorded = runtime.block_on(replay::cache_from_recording(
                file,
                resource,
                &informer,
                at.as_deref(),
            ))?;
            // As `record --metadata-only` refused them.
            refuse_specs_outside_metadata(&spec, &specs, recorded.metadata_only)?;
            (recorded.scope, Some(recorded.ended_at))
        }
        (None, Some(resource)) => {
            let listing = from_cluster(
                args.access.clone(),
                args.cache.reflector(),
                args.cache.informer(),
                profile.clone(),
                Arc::clone(&informer),
                resource.to_owned(),
                name.clone(),
            );
            (super::run_on_worker(&runtime, listing)?, None)
        }
        (None, None) => {
            return Err(anyhow!("a RESOURCE to index is needed (or --replay FILE)"))
                .exit_with(Exit::Usage);
        }
    };
    // The Reflector and consumer are done; nothing else runs while answering.
    drop(runtime);
    match (&at, now) {
        (Some(at), Some(ended_at)) => {
            let (cache, then) = at
                .cache(&specs, ended_at)
                .map_err(anyhow::Error::msg)
                .exit_with(Exit::Usage)?;
            answer(&cache, &spec, &scope, Some(then), &args)
        }
        _ => answer(informer.indexer(), &spec, &scope, now, &args),
    }
}

/// RESOURCE, and the one object's name of kubectl's `TYPE/NAME` form (listed with the field
/// selector `metadata.name=NAME`, as `watch NAME`). A recording's cache is indexed whole.
fn one_object(args: &IndexArgs) -> anyhow::Result<(Option<String>, Option<String>)> {
    let Some(resource) = &args.resource else {
        return Ok((None, None));
    };
    let (resource, name) = resource_and_name("index", resource, None)
        .map_err(anyhow::Error::msg)
        .exit_with(Exit::Usage)?;
    if let (Some(file), Some(name)) = (&args.replay, &name) {
        return Err(anyhow!(
            "index --replay indexes what {} holds, not one object: give {resource:?} without \
             /{name}, or leave RESOURCE out",
            file.display()
        ))
        .exit_with(Exit::Usage);
    }
    Ok((Some(resource), name))
}

/// [`refuse::outside_metadata`] for `--by` and the `--index` specs.
fn refuse_specs_outside_metadata(
    by: &IndexSpec,
    specs: &[IndexSpec],
    metadata_only: bool,
) -> anyhow::Result<()> {
    let flagged = specs
        .iter()
        .map(|s| (if s == by { "--by" } else { "--index" }, s));
    refuse::outside_metadata(flagged, metadata_only)
}

/// Lists `resource` through `informer` into its cache, as the `profile` lists; returns the words
/// that name what was listed (`pods in namespace "default"`). Owns what it reads, to run on a
/// worker of the runtime, as `watch` does ([`run_on_worker`](super::run_on_worker)).
async fn from_cluster(
    access: AccessArgs,
    reflector: ReflectorArgs,
    informer_args: InformerArgs,
    profile: Profile,
    informer: Arc<Informer>,
    resource: String,
    name: Option<String>,
) -> anyhow::Result<String> {
    let target = target::resolve_listable(&access, &resource).await?;
    one_shot::sync(
        &informer,
        rediscovering_lister_watcher(&target, Need::List, &access, &reflector, name.as_deref()),
        reflector_config(&reflector, &informer_args, &profile),
        |error| reflector_failure_while("listing", error, &target),
    )
    .await?;
    Ok(target.describe())
}

/// Queries the synced cache and writes the answer; ages are told from `now` (the present if
/// `None`).
fn answer(
    indexer: &IndexerReader<Object>,
    spec: &IndexSpec,
    scope: &str,
    now: Option<SystemTime>,
    args: &IndexArgs,
) -> anyhow::Result<()> {
    let index = spec.name();
    let secrets = indexer.list().iter().any(|obj| obj.is_secret());
    if !args.show_secret_data && spec.reads_secret_values() && secrets {
        return Err(anyhow!(
            "{index} would print Secret values, which every output redacts: add \
             --show-secret-data to see them"
        ))
        .exit_with(Exit::Usage);
    }
    let indices = refuse::index_specs(&args.cache.informer())?;
    refuse::secret_specs(
        indices.iter().map(|spec| ("--index", spec)),
        secrets,
        args.show_secret_data,
    )?;
    let mut renderer = IndexRenderer::new(args.output)
        .width(table_width())
        .show_secret_data(args.show_secret_data)
        .no_headers(args.no_headers);
    if let Some(now) = now.and_then(|now| jiff::Timestamp::try_from(now).ok()) {
        renderer = renderer.now(now);
    }
    let mut out = BufWriter::new(io::stdout().lock());
    // As `watch` says it; a reader gone (`| head`) is still a quiet exit 0.
    let output = |error: io::Error| anyhow::Error::new(error).context("cannot write the output");
    // One rule for every format: an answer with nothing in it writes nothing on stdout (not even a
    // `<none>` row, which would pass for an answer), and says so in one sentence on stderr.
    let nothing = if args.values.is_empty() {
        let listing = ValueListing::from_indexer(indexer, &index)?;
        if !listing.is_empty() {
            renderer.values(&mut out, &listing).map_err(output)?;
        }
        listing.is_empty().then(|| match listing.total {
            0 => format!("no {scope} to index"),
            n => format!(
                "none of the {scope} has a value under {index} ({} listed){}",
                count(n as u64, "object"),
                did_you_mean(spec, indexer),
            ),
        })
    } else {
        // `*`: every value the index holds, so that "which objects have this label at all" has an
        // answer.
        let values: Vec<String> = if args.values.iter().any(|v| v == ANY_VALUE) {
            indexer.list_index_func_values(&index)?
        } else {
            args.values.clone()
        };
        let matches = Matches::from_indexer(indexer, &index, &values)?;
        if args.keys_only {
            write_keys(&mut out, matches.keys()).map_err(output)?;
        } else if !matches.is_empty() {
            renderer.objects(&mut out, &matches).map_err(output)?;
        }
        matches.is_empty().then(|| {
            let known = indexer
                .list_index_func_values(&index)
                .map_or(0, |v| v.len());
            let asked = if values.is_empty() {
                "any value".to_owned()
            } else {
                quoted_or(&args.values)
            };
            if known == 0 {
                format!(
                    "no {scope} indexed under {index} = {asked}: none of the {} has a value \
                     under {index}{}",
                    count(indexer.len() as u64, "object"),
                    did_you_mean(spec, indexer),
                )
            } else {
                format!(
                    "no {scope} indexed under {index} = {asked} (the index has {}; list them \
                     without --value)",
                    count(known as u64, "value"),
                )
            }
        })
    };
    out.flush().map_err(output)?;
    match nothing {
        Some(message) if args.fail_empty => Err(Failure {
            exit: Exit::Empty,
            error: anyhow!(message),
            note: None,
        }
        .into()),
        Some(message) => {
            if !args.quiet {
                let _ = writeln!(
                    io::stderr(),
                    "kubectl-deltas: note: {}",
                    printable(&message)
                );
            }
            Ok(())
        }
        None => Ok(()),
    }
}

/// `; did you mean field:spec.nodeName?` when the listed objects have a label, an annotation or a
/// field path close to the one `spec` names, which none of them has; else nothing.
fn did_you_mean(spec: &IndexSpec, indexer: &IndexerReader<Object>) -> String {
    let objects = indexer.list();
    spec.suggest(objects.iter().map(|obj| obj.as_ref()))
        .map(|suggested| format!("; did you mean {suggested}?"))
        .unwrap_or_default()
}

/// `$COLUMNS` when set, else the terminal's width; `None` when stdout is a pipe or a file (the
/// renderer then fits `-o table`'s lists of keys into 80 columns, and `-o wide` lists them whole).
fn table_width() -> Option<usize> {
    let columns = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&c| c > 0);
    columns.or_else(|| {
        io::stdout()
            .is_terminal()
            .then(|| comfy_table::Table::new().width().map(usize::from))
            .flatten()
    })
}

/// The `--value` that stands for every value of the index.
const ANY_VALUE: &str = "*";

/// `"a"`, `"a" or "b"`, `"a", "b" or "c"`.
fn quoted_or(values: &[String]) -> String {
    let quoted: Vec<String> = values.iter().map(|v| format!("{v:?}")).collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => quoted.join(""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn several_values_read_as_alternatives() {
        let values = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(quoted_or(&values(&["a"])), r#""a""#);
        assert_eq!(quoted_or(&values(&["a", "b"])), r#""a" or "b""#);
        assert_eq!(quoted_or(&values(&["a", "b", "c"])), r#""a", "b" or "c""#);
    }
}
