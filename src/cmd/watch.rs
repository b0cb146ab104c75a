//! `watch RESOURCE[,RESOURCE…] [NAME]`: the [`pipeline`](super::pipeline) on a live cluster,
//! one informer per resource, until Ctrl-C, `--duration` or a limit.

use anyhow::bail;
use kubectl_deltas::Object;
use kubectl_deltas::cache::reflector::TokioClock;

use kubectl_deltas::source::discovery::Need;

use super::informer::{rediscovering_lister_watcher, reflector_config, reflector_failure};
use super::pipeline::{Pipeline, PipelineError, Source};
use super::plan::{OutputPlan, Plan};
use super::target::{self, Target};
use crate::cli::exit::{Exit, WithExit};
use crate::cli::type_name::resource_and_name;
use crate::cli::{GlobalArgs, WatchArgs};

pub fn run(mut args: WatchArgs, global: &GlobalArgs) -> anyhow::Result<()> {
    (args.resources, args.name) = resource_and_name("watch", &args.resources, args.name.as_deref())
        .map_err(anyhow::Error::msg)
        .exit_with(Exit::Usage)?;
    let names = resource_names(&args.resources).exit_with(Exit::Usage)?;
    // Every flag is checked before the cluster is contacted.
    let output = OutputPlan::from_args(&args.view, global)?;
    let mut plan = Plan::resolve(
        output,
        &args.informer,
        args.store.store,
        args.reflector.watch_list,
        |profile| reflector_config(&args.reflector, &args.informer, profile),
    )?
    .compare(
        args.compare.compare.as_ref(),
        &args.informer,
        args.store.store,
        args.reflector.watch_list,
        false,
        |profile| reflector_config(&args.reflector, &args.informer, profile),
    )?;
    plan.resolve_owns(&names, "this watch")?;
    plan.refuse_outside_metadata_queries(args.reflector.metadata_only)?;
    plan.share_reflector_seed(fastrand::u64(..));
    let runtime = super::runtime()?;
    super::run_on_worker(&runtime, watch(args, names, plan))
}

/// `deploy,rs,po` → `["deploy", "rs", "po"]`.
fn resource_names(arg: &str) -> anyhow::Result<Vec<String>> {
    let names: Vec<String> = arg.split(',').map(|n| n.trim().to_owned()).collect();
    if names.iter().any(String::is_empty) {
        bail!("invalid resource list {arg:?}: expected RESOURCE[,RESOURCE…] such as deploy,rs,po");
    }
    Ok(names)
}

async fn watch(args: WatchArgs, names: Vec<String>, plan: Plan) -> anyhow::Result<()> {
    let targets = target::resolve_all(&args.access, &names).await?;
    let secrets = targets
        .iter()
        .any(|t| Object::is_secret_resource(&t.resource.api_resource()));
    plan.refuse_secret_queries(secrets, plan.output.show_secret_data)?;
    let sources: Vec<Source<_>> = targets
        .iter()
        .map(|target| {
            Source::new(
                target.resource.qualified_name(),
                rediscovering_lister_watcher(
                    target,
                    Need::Watch,
                    &args.access,
                    &args.reflector,
                    args.name.as_deref(),
                ),
            )
        })
        .collect();
    // `--duration` ends the session as Ctrl-C does, rather than by killing it as `timeout` would.
    let duration = args.duration.0;
    let elapsed = async move {
        match duration {
            Some(duration) => tokio::time::sleep(duration).await,
            None => std::future::pending().await,
        }
    };
    let pipeline = Pipeline::new(plan);
    let stacks_differ = pipeline.stacks_differ();
    let result = pipeline.run(sources, TokioClock, elapsed).await;
    match result {
        Ok(_) if stacks_differ.load(std::sync::atomic::Ordering::Relaxed) => {
            Err(crate::cli::exit::stacks_differ())
        }
        Ok(_) => Ok(()),
        Err(error) => Err(failure(error, &targets)),
    }
}

fn failure(error: PipelineError, targets: &[Target]) -> anyhow::Error {
    match error {
        PipelineError::Reflector { index, error, .. } => reflector_failure(error, &targets[index]),
        other => anyhow::Error::new(other),
    }
}
