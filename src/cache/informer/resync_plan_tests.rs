//! The resync-period rules of `shared_informer.go`.

use super::*;

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

/// `NewSharedIndexInformerWithOptions`: the informer's period is the check period and the
/// default handler period; `AddEventHandler` uses that default.
#[test]
fn add_event_handler_uses_the_informer_period_which_is_the_check_period() {
    let mut plan = ResyncPlan::new(secs(30));
    assert_eq!(plan.check_period(), secs(30));
    let handler = plan.add_handler(None);
    assert_eq!(handler.requested, secs(30));
    assert_eq!(handler.period, secs(30));
    assert_eq!(handler.lowered_check_period, None);
    assert!(handler.warnings.is_empty());
    assert_eq!(plan.start(), Some(secs(30)));
}

/// `AddEventHandlerWithResyncPeriod` before start: a smaller handler period lowers the check
/// period (`resyncCheckPeriodChanged`); a larger one keeps its own period.
#[test]
fn a_smaller_handler_period_before_start_lowers_the_check_period() {
    let mut plan = ResyncPlan::new(secs(60));
    let slow = plan.add_handler(Some(secs(90)));
    assert_eq!((slow.period, slow.lowered_check_period), (secs(90), None));
    let fast = plan.add_handler(Some(secs(20)));
    assert_eq!(fast.period, secs(20));
    assert_eq!(fast.lowered_check_period, Some(secs(20)));
    assert!(fast.warnings.is_empty());
    assert_eq!(plan.check_period(), secs(20));
    // resyncCheckPeriodChanged re-derives the earlier listeners: unchanged here.
    assert_eq!(plan.period_for(slow.requested), secs(90));
    assert_eq!(plan.period_for(Duration::ZERO), Duration::ZERO);
    assert_eq!(plan.start(), Some(secs(20)));
}

/// `AddEventHandlerWithResyncPeriod`: below `minimumResyncPeriod` a period is raised to 1 s,
/// so the check period never goes below 1 s.
#[test]
fn no_period_below_one_second() {
    let mut plan = ResyncPlan::new(secs(30));
    let handler = plan.add_handler(Some(Duration::from_millis(200)));
    assert_eq!(handler.requested, MINIMUM_RESYNC_PERIOD);
    assert_eq!(handler.period, MINIMUM_RESYNC_PERIOD);
    assert_eq!(
        handler.warnings,
        [ResyncWarning::BelowMinimum {
            requested: Duration::from_millis(200)
        }]
    );
    assert_eq!(plan.check_period(), MINIMUM_RESYNC_PERIOD);
}

/// `AddEventHandlerWithResyncPeriod` after start: the check period is frozen, and a smaller
/// handler period is raised to it with a warning; a larger one is kept as asked (not rounded).
#[test]
fn after_start_a_smaller_handler_period_is_raised_to_the_check_period() {
    let mut plan = ResyncPlan::new(secs(30));
    plan.start();
    let fast = plan.add_handler(Some(secs(10)));
    assert_eq!((fast.requested, fast.period), (secs(30), secs(30)));
    assert_eq!(fast.lowered_check_period, None);
    assert_eq!(
        fast.warnings,
        [ResyncWarning::RaisedToCheckPeriod {
            requested: secs(10),
            check: secs(30)
        }]
    );
    assert_eq!(plan.check_period(), secs(30));
    let slow = plan.add_handler(Some(secs(45)));
    assert_eq!(slow.period, secs(45));
    assert!(slow.warnings.is_empty());
}

/// `NewSharedIndexInformerWithOptions` + `determineResyncPeriod`: an informer whose own period
/// is 0 never resyncs, not even for handlers that ask for it, before or after start.
#[test]
fn an_informer_period_of_zero_means_no_resyncs_for_any_handler() {
    let mut plan = ResyncPlan::new(Duration::ZERO);
    let default = plan.add_handler(None);
    assert_eq!(default.period, Duration::ZERO);
    assert!(
        default.warnings.is_empty(),
        "asking for nothing is no surprise"
    );
    let asked = plan.add_handler(Some(secs(30)));
    assert_eq!(asked.requested, secs(30));
    assert_eq!(asked.period, Duration::ZERO);
    assert_eq!(asked.lowered_check_period, None);
    assert_eq!(
        asked.warnings,
        [ResyncWarning::InformerDoesNotResync {
            requested: secs(30)
        }]
    );
    assert_eq!(plan.check_period(), Duration::ZERO);
    assert_eq!(plan.start(), None, "no resync timer in the Reflector");
    let late = plan.add_handler(Some(secs(5)));
    assert_eq!(late.period, Duration::ZERO);
}

/// `AddEventHandlerWithResyncPeriod(handler, 0)`: a handler that wants no resync gets none,
/// whatever the informer does.
#[test]
fn a_handler_period_of_zero_never_resyncs() {
    let mut plan = ResyncPlan::new(secs(30));
    let none = plan.add_handler(Some(Duration::ZERO));
    assert_eq!(
        (none.requested, none.period),
        (Duration::ZERO, Duration::ZERO)
    );
    assert!(none.warnings.is_empty());
    assert_eq!(plan.check_period(), secs(30));
}

/// `determineResyncPeriod`: client-go's three branches.
#[test]
fn determine_resync_period_branches() {
    assert_eq!(
        determine_resync_period(Duration::ZERO, secs(5)),
        (Duration::ZERO, None)
    );
    assert_eq!(
        determine_resync_period(secs(3), Duration::ZERO).0,
        Duration::ZERO
    );
    assert_eq!(determine_resync_period(secs(3), secs(5)).0, secs(5));
    assert_eq!(determine_resync_period(secs(7), secs(5)), (secs(7), None));
}

#[test]
fn warnings_are_one_sentence() {
    let warning = ResyncWarning::InformerDoesNotResync {
        requested: secs(30),
    };
    assert_eq!(
        warning.to_string(),
        "resync period 30s has no effect: the informer's own resync period is 0, so it never \
         resyncs any handler"
    );
}
