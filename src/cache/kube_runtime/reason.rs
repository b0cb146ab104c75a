//! Why a reconcile was requested: what the scheduler keeps with each slot and a reconcile
//! reports.

use std::fmt;

/// Why a reconcile was requested (kube-runtime's `ReconcileReason`, which its tracing shows).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    /// The object's `Apply` (`ObjectUpdated`).
    ObjectUpdated,
    /// The object's `InitApply`, from a list (`ObjectUpdated` too in kube-runtime).
    Relist,
    /// An owned object's `Apply`, `InitApply` or `Delete` (`RelatedObjectUpdated`).
    OwnedObjectUpdated {
        /// The owned resource, as named on the command line.
        resource: String,
        /// The owned object's key.
        key: String,
    },
    /// The reconciler's `Action::requeue` (`ReconcilerRequestedRetry`).
    Requeue,
    /// The error policy's requeue (`ErrorPolicyRequestedRetry`).
    ErrorRequeue,
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Reason::ObjectUpdated => "object updated",
            Reason::Relist => "relist",
            Reason::OwnedObjectUpdated { .. } => "owned object updated",
            Reason::Requeue => "requeue",
            Reason::ErrorRequeue => "error requeue",
        })
    }
}
