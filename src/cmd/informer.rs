//! What every informer-running command shares: the Reflector configuration and the
//! kube ListerWatcher, and how a Reflector failure maps to an exit code.

use std::time::Duration;

use kubectl_deltas::Object;
use kubectl_deltas::cache::{ReflectorConfig, ReflectorError};
use kubectl_deltas::source::discovery::{Need, ResourceInfo};
use kubectl_deltas::source::{KubeListerWatcher, SourceError};

use super::rediscover::Rediscovering;
use super::target::Rediscovered;
use super::target::Target;
use crate::cli::exit::{Exit, Failure};
use crate::cli::profile::Profile;
use crate::cli::{AccessArgs, InformerArgs, Period, ReflectorArgs};

pub fn lister_watcher(
    target: &Target,
    access: &AccessArgs,
    reflector: &ReflectorArgs,
    name: Option<&str>,
) -> KubeListerWatcher {
    lister_watcher_for(target, access, reflector, name)(&target.resource)
}

/// [`lister_watcher`], which on a 404 for a mapping from the discovery cache discovers again
/// once and carries on with the new mapping ([`Rediscovering`]).
pub fn rediscovering_lister_watcher(
    target: &Target,
    need: Need,
    access: &AccessArgs,
    reflector: &ReflectorArgs,
    name: Option<&str>,
) -> Rediscovering {
    Rediscovering::new(
        target,
        need,
        lister_watcher_for(target, access, reflector, name),
    )
}

/// What makes the ListerWatcher of a mapping of `target`'s resource, with the flags' namespace,
/// selectors and options.
fn lister_watcher_for(
    target: &Target,
    access: &AccessArgs,
    reflector: &ReflectorArgs,
    name: Option<&str>,
) -> impl Fn(&ResourceInfo) -> KubeListerWatcher + Send + Sync + 'static {
    let client = target.connection.client.clone();
    let namespace = target.namespace.clone();
    let metadata_only = reflector.metadata_only;
    // As `reflector_config` installs the transform: the list's items are stripped as they are
    // decoded, the watch's events by the transform.
    let strip_managed_fields = !reflector.no_strip_managed_fields;
    let request_timeout = access.request_timeout.0;
    let labels = access.selector.clone();
    // `watch pods web-1` narrows the watch to one object, as `kubectl get pods web-1 -w` does.
    let fields: Vec<String> = access
        .field_selector
        .iter()
        .cloned()
        .chain(name.into_iter().map(|name| format!("metadata.name={name}")))
        .collect();
    move |resource: &ResourceInfo| {
        let namespace = namespace.as_deref().filter(|_| resource.namespaced);
        let mut lw = KubeListerWatcher::new(client.clone(), &resource.api_resource(), namespace)
            .metadata_only(metadata_only)
            .strip_managed_fields(strip_managed_fields)
            .request_timeout(request_timeout);
        if let Some(labels) = &labels {
            lw = lw.labels(labels.clone());
        }
        if !fields.is_empty() {
            lw = lw.fields(fields.join(","));
        }
        lw
    }
}

/// The flags' profile: `--client-go` with the informer's flags and `--watch-list` over it.
pub fn profile(informer: &InformerArgs, reflector: &ReflectorArgs) -> anyhow::Result<Profile> {
    Profile::resolve(informer, reflector.watch_list)
}

/// The Reflector's configuration from its flags and the resolved `profile` (its streaming list).
pub fn reflector_config(
    reflector: &ReflectorArgs,
    informer: &InformerArgs,
    profile: &Profile,
) -> ReflectorConfig {
    let mut config = ReflectorConfig::default()
        .client_go(profile.version)
        .consistent_list(reflector.consistent_list)
        .watch_list(profile.watch_list.value);
    if let Some(page_size) = reflector.page_size {
        config = config.page_size(page_size);
    }
    if let Some(timeout) = reflector.watch_timeout.0 {
        config = config.watch_timeout(whole_seconds("--watch-timeout", timeout));
    }
    if let Some(Period(Some(period))) = informer.resync {
        // Not raised to a second: client-go raises only handlers' periods
        // (`AddEventHandlerWithResyncPeriod`), never the informer's own (`ResyncPlan`).
        config = config.resync(period);
    }
    if let Some(period) = reflector.verify_every.0 {
        config = config.verify_every(at_least_a_second("--verify-every", period));
    }
    if !reflector.no_strip_managed_fields {
        config = strip_managed_fields(config);
    }
    config
}

/// client-go's floor for handlers' resync periods (`minimumResyncPeriod`), which it raises
/// smaller ones to with a warning; this tool's floor for `--verify-every`, each verification
/// being a full list.
const MINIMUM_PERIOD: Duration = Duration::from_secs(1);

pub fn at_least_a_second(flag: &str, period: Duration) -> Duration {
    if period >= MINIMUM_PERIOD {
        return period;
    }
    tracing::warn!("{flag} {period:?} is below the minimum of 1s; using 1s, as client-go does");
    MINIMUM_PERIOD
}

/// A watch's `timeoutSeconds` is a whole number of seconds: anything else is rounded up (at
/// least 1s) with a warning, so that the timeout the server applies is the one the user sees.
pub fn whole_seconds(flag: &str, timeout: Duration) -> Duration {
    let seconds = timeout.as_secs() + u64::from(timeout.subsec_nanos() > 0);
    let sent = Duration::from_secs(seconds.max(1));
    if sent != timeout {
        tracing::warn!(
            "{flag} {timeout:?} is sent as timeoutSeconds, a whole number of seconds; using {}s",
            sent.as_secs()
        );
    }
    sent
}

/// The transform most informers install: managedFields are large and never what a handler reads.
/// The newest entries' manager, operation, subresource, time and top-level fields stay
/// ([`Object::trim_managed_fields`]), which the timeline names a change's writer by.
pub fn strip_managed_fields(config: ReflectorConfig) -> ReflectorConfig {
    config.transform(Object::trim_managed_fields)
}

/// What the Reflector gave up on. 401, 403 and 404 are the cluster refusing access (exit 3), and
/// so is a request the client's settings cannot make ([`SourceError::Request`]), with a note on
/// what a controller would do instead; 400 and 422 are the server refusing the request
/// itself, with the same note: a 400 comes of what the flags asked for (a field selector on a
/// field it does not index, say), a usage error (exit 2), a 422 a runtime error; anything else is
/// a runtime error.
pub fn reflector_failure(error: ReflectorError, target: &Target) -> anyhow::Error {
    reflector_failure_while("watching", error, target)
}

/// [`reflector_failure`] for a command that does something else than watching (`listing`).
pub fn reflector_failure_while(
    doing: &str,
    error: ReflectorError,
    target: &Target,
) -> anyhow::Error {
    let source = error.source_error();
    // A request the client's own settings cannot make (a refused server certificate, a list
    // longer than --request-timeout, credentials that cannot be obtained) is refused access as
    // much as a 401: on a cold start, discovery meets it first and exits the same way.
    let refused =
        source.is_auth() || source.is_not_found() || matches!(source, SourceError::Request(_));
    let (exit, mut note) = if refused {
        (Exit::ClusterAccess, Some(informer_would_hang(&error)))
    } else if source.is_invalid() {
        // 400/422: the request itself is refused; client-go retries it forever all the same.
        let exit = if source.code() == Some(400) {
            Exit::Usage
        } else {
            Exit::Runtime
        };
        (exit, Some(informer_would_hang(&error)))
    } else {
        (Exit::Runtime, None)
    };
    let mut context = format!("{doing} {} failed", target.describe());
    let mut exit = exit;
    if source.is_not_found() {
        // Discovery (cached for 6 hours) said the server serves it: a CRD deleted since, or a
        // version no longer served. The next run must not trust that mapping again.
        target.discovery.forget();
        let (name, version) = (
            target.resource.qualified_name(),
            target.resource.api_version(),
        );
        context = match target.rediscovered.get() {
            Some(Rediscovered::Gone(why)) => {
                // Unknown now, as at the start of a run that discovered afresh: a usage error,
                // with nothing a client-go informer would do (it is never started for a
                // resource its RESTMapper does not know).
                exit = Exit::Usage;
                note = None;
                format!(
                    "{context}: the API server does not serve {name} at {version} (404 Not \
                     Found), where the discovery cache had it, and discovering again found it \
                     nowhere: {why}"
                )
            }
            Some(Rediscovered::Unchanged) => format!(
                "{context}: the API server does not serve {name} at {version} (404 Not Found), \
                 though discovery, asked again, still lists it there"
            ),
            Some(Rediscovered::Failed(why)) => format!(
                "{context}: the API server does not serve {name} at {version} (404 Not Found), \
                 where the discovery cache had it, and discovering again failed: {why}"
            ),
            Some(Rediscovered::Moved(_)) | None => format!(
                "{context}: the API server does not serve {name} at {version} (404 Not Found): \
                 it was removed or is served at another version since discovery; the discovery \
                 cache is cleared, so the next run discovers again"
            ),
        };
    }
    let error = anyhow::Error::new(error).context(context);
    Failure { exit, error, note }.into()
}

/// What a client-go informer does where this tool stops: `Reflector.Run` hands the error to its
/// `WatchErrorHandler`, which only logs it, and `wait.BackoffUntil` runs ListAndWatch again after
/// a backoff, forever.
fn informer_would_hang(error: &ReflectorError) -> String {
    format!(
        "a client-go informer does not stop here: its Reflector logs the error and retries the \
         {} forever with backoff (up to about a minute apart), HasSynced never becomes true, and \
         a controller waiting in WaitForCacheSync hangs without saying why",
        error.verb()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn periods_below_a_second_become_a_second_as_in_client_go() {
        let ms = Duration::from_millis;
        assert_eq!(
            at_least_a_second("--resync", Duration::from_nanos(1)),
            ms(1000)
        );
        assert_eq!(at_least_a_second("--resync", ms(999)), ms(1000));
        assert_eq!(at_least_a_second("--resync", ms(1000)), ms(1000));
        assert_eq!(at_least_a_second("--resync", ms(1500)), ms(1500));
    }
}
