//! The resync periods of a shared informer and its handlers, as client-go's
//! `NewSharedIndexInformerWithOptions`, `AddEventHandlerWithResyncPeriod` and
//! `determineResyncPeriod` (`tools/cache/shared_informer.go`) decide them, as a pure value.
//!
//! Two periods are involved. The informer's **resync check period** is how often the Reflector's
//! resync timer fires and asks the processor whether any handler is due ([`ResyncPlan::start`]
//! gives it to the Reflector as its resync period). Each handler's own **resync period** decides
//! whether it is due at such a check. The rules:
//!
//! - the check period starts as the informer's own resync period (the factory's default), which
//!   is also the period of a handler added without one (`AddEventHandler`);
//! - a requested handler period below [`MINIMUM_RESYNC_PERIOD`] (1 s) is raised to it;
//! - a handler period below the check period, added **before** start, lowers the check period to
//!   it (and re-derives the other handlers' periods, `resyncCheckPeriodChanged`); added **after**
//!   start, it is raised to the check period instead;
//! - **an informer whose own period is 0 never resyncs**, whatever its handlers ask: its check
//!   period stays 0 (nothing is below it), so the Reflector runs no resync timer, and every
//!   handler's period becomes 0 (`determineResyncPeriod`). client-go documents this on
//!   `NewSharedIndexInformerWithOptions` and only logs a warning per handler, so a controller
//!   that asks for a resync on a factory built with `resync = 0` silently gets none.
//!
//! A handler's period is not rounded: due-ness is only tested at each check, so a handler is
//! resynced at the first check at or after its due time, which makes the interval its period
//! rounded up to a multiple of the check period while the checks keep their rhythm (the "nominal
//! resync period" of client-go's documentation).

use std::fmt;
use std::time::Duration;

/// client-go's `minimumResyncPeriod`: no handler resyncs more often than this.
pub const MINIMUM_RESYNC_PERIOD: Duration = Duration::from_secs(1);

/// A requested period that was not used as asked; client-go logs each of these as a warning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResyncWarning {
    /// Raised to [`MINIMUM_RESYNC_PERIOD`] (`AddEventHandlerWithResyncPeriod`).
    BelowMinimum {
        /// The period asked for.
        requested: Duration,
    },
    /// Added after start with a period below the check period, so raised to it
    /// (`AddEventHandlerWithResyncPeriod`).
    RaisedToCheckPeriod {
        /// The period asked for (after the minimum).
        requested: Duration,
        /// The informer's check period.
        check: Duration,
    },
    /// The informer does not resync (its own period is 0), so neither does this handler
    /// (`determineResyncPeriod`).
    InformerDoesNotResync {
        /// The period asked for.
        requested: Duration,
    },
    /// Below the check period, so raised to it (`determineResyncPeriod`; the rules above make
    /// this unreachable through [`ResyncPlan`], but the function keeps client-go's branch).
    IncreasedToCheckPeriod {
        /// The period asked for.
        requested: Duration,
        /// The informer's check period.
        check: Duration,
    },
}

impl fmt::Display for ResyncWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = |d: &Duration| humantime::format_duration(*d).to_string();
        match self {
            ResyncWarning::BelowMinimum { requested } => write!(
                f,
                "resync period {} is below the minimum of {}, so it is {} instead",
                d(requested),
                d(&MINIMUM_RESYNC_PERIOD),
                d(&MINIMUM_RESYNC_PERIOD)
            ),
            ResyncWarning::RaisedToCheckPeriod { requested, check } => write!(
                f,
                "resync period {} is below the informer's resync check period {} and the informer \
                 has already started, so it is {} instead",
                d(requested),
                d(check),
                d(check)
            ),
            ResyncWarning::InformerDoesNotResync { requested } => write!(
                f,
                "resync period {} has no effect: the informer's own resync period is 0, so it \
                 never resyncs any handler",
                d(requested)
            ),
            ResyncWarning::IncreasedToCheckPeriod { requested, check } => write!(
                f,
                "resync period {} is below the informer's resync check period {}, so it is {} \
                 instead",
                d(requested),
                d(check),
                d(check)
            ),
        }
    }
}

/// What one handler registration was given: the two periods client-go's `processorListener`
/// keeps, and what the registration did to the informer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandlerResync {
    /// `requestedResyncPeriod`: the period asked for (or the informer's default), after the
    /// minimum and, once started, the raise to the check period. 0: no resync wanted.
    pub requested: Duration,
    /// `resyncPeriod`: the period due-ness is computed with; 0 means never resynced.
    pub period: Duration,
    /// Set when this registration, made before start, lowered the informer's check period to
    /// this value; the other listeners' periods must then be re-derived
    /// ([`ResyncPlan::period_for`] on each one's `requested`: `resyncCheckPeriodChanged`).
    pub lowered_check_period: Option<Duration>,
    /// What was changed from what was asked, in the order client-go logs it.
    pub warnings: Vec<ResyncWarning>,
}

/// client-go's `determineResyncPeriod`: the period a listener uses, given what it asked for and
/// the informer's check period.
pub fn determine_resync_period(
    desired: Duration,
    check: Duration,
) -> (Duration, Option<ResyncWarning>) {
    if desired.is_zero() {
        return (desired, None);
    }
    if check.is_zero() {
        let warning = ResyncWarning::InformerDoesNotResync { requested: desired };
        return (Duration::ZERO, Some(warning));
    }
    if desired < check {
        let warning = ResyncWarning::IncreasedToCheckPeriod {
            requested: desired,
            check,
        };
        return (check, Some(warning));
    }
    (desired, None)
}

/// The resync state of a shared informer as handlers are registered: client-go's
/// `sharedIndexInformer.resyncCheckPeriod`, `defaultEventHandlerResyncPeriod` and `started`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResyncPlan {
    /// How often the Reflector asks whether a resync is due; 0: never. Only lowered, and only
    /// before [`start`](ResyncPlan::start); never below [`MINIMUM_RESYNC_PERIOD`] unless 0.
    check_period: Duration,
    /// The period of handlers registered without one; fixed at construction.
    default_handler_period: Duration,
    /// Set by [`start`](ResyncPlan::start); from then on `check_period` is frozen.
    started: bool,
}

impl ResyncPlan {
    /// An informer whose own resync period is `informer_period` (0: it never resyncs), as
    /// `NewSharedIndexInformerWithOptions`: that period is both the check period and the default
    /// handler period.
    pub fn new(informer_period: Duration) -> Self {
        ResyncPlan {
            check_period: informer_period,
            default_handler_period: informer_period,
            started: false,
        }
    }

    /// The check period: how often the Reflector's resync timer fires; 0 when the informer never
    /// resyncs.
    pub fn check_period(&self) -> Duration {
        self.check_period
    }

    /// The Reflector's resync period (its `FullResyncPeriod`): the check period, or `None` when
    /// there is no resync timer at all.
    pub fn reflector_resync_period(&self) -> Option<Duration> {
        Some(self.check_period).filter(|p| !p.is_zero())
    }

    /// The period `AddEventHandler` registers a handler with.
    pub fn default_handler_period(&self) -> Duration {
        self.default_handler_period
    }

    /// Whether [`start`](ResyncPlan::start) was called.
    pub fn is_started(&self) -> bool {
        self.started
    }

    /// Freezes the check period, as `sharedIndexInformer.Run` does when it hands it to the
    /// Reflector, and returns the Reflector's resync period.
    pub fn start(&mut self) -> Option<Duration> {
        self.started = true;
        self.reflector_resync_period()
    }

    /// The period of a listener that asked for `requested`, under the current check period
    /// (`determineResyncPeriod`).
    pub fn period_for(&self, requested: Duration) -> Duration {
        determine_resync_period(requested, self.check_period).0
    }

    /// Registers a handler, as `AddEventHandlerWithResyncPeriod` (`Some(period)`) or
    /// `AddEventHandler` (`None`: the informer's default period). Returns the periods the
    /// handler's listener gets; lowers the check period when the rules say so.
    pub fn add_handler(&mut self, requested: Option<Duration>) -> HandlerResync {
        let mut requested = requested.unwrap_or(self.default_handler_period);
        let mut warnings = Vec::new();
        let mut lowered_check_period = None;
        if !requested.is_zero() {
            if requested < MINIMUM_RESYNC_PERIOD {
                warnings.push(ResyncWarning::BelowMinimum { requested });
                requested = MINIMUM_RESYNC_PERIOD;
            }
            if requested < self.check_period {
                if self.started {
                    warnings.push(ResyncWarning::RaisedToCheckPeriod {
                        requested,
                        check: self.check_period,
                    });
                    requested = self.check_period;
                } else {
                    self.check_period = requested;
                    lowered_check_period = Some(requested);
                }
            }
        }
        let (period, warning) = determine_resync_period(requested, self.check_period);
        warnings.extend(warning);
        HandlerResync {
            requested,
            period,
            lowered_check_period,
            warnings,
        }
    }
}

#[cfg(test)]
#[path = "resync_plan_tests.rs"]
mod tests;
