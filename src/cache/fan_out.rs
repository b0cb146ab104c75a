//! One [`ListerWatcher`] read by several Reflectors, as if each had it to itself: `--compare`'s
//! stacks run on one stream, one list and one watch against the source rather than one per
//! stack.
//!
//! Invariants:
//! - Every branch is answered the same calls in the same order: its k-th list (or recorded
//!   choice of a kind) gets the upstream's answer to the k-th such call, made once, by whichever
//!   branch asked first. The Reflectors of the branches run one profile's requests on one
//!   stream only when those requests are alike, which a replay guarantees (the recording says
//!   what each call gets, and how the initial list came).
//! - A watch is read in lock step: the upstream's next event is taken only once every branch
//!   still running has taken every event before it. A replay that takes its consumer's turn
//!   when the Reflector asks for the next line (a replay's `Quiescence`) then
//!   finds every branch's queue holding the same lines, so that the stacks pop what one
//!   Reflector would have queued.
//! - A branch that is dropped (its lane ended) no longer holds the others back.

use std::collections::{HashMap, VecDeque};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use futures_util::{Stream, StreamExt as _};

use super::listwatch::{
    ListPage, ListRequest, ListerWatcher, RandomChoice, ResourceTarget, SourceError, WatchEvent,
    WatchRequest, WatchStream,
};

/// One branch of a fanned-out [`ListerWatcher`] ([`fan_out`]).
pub struct FanOut<L> {
    shared: Arc<Shared<L>>,
    branch: usize,
}

impl<L> std::fmt::Debug for FanOut<L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FanOut")
            .field("branch", &self.branch)
            .finish_non_exhaustive()
    }
}

/// `upstream` read by `branches` Reflectors: one [`FanOut`] each. With one branch, every call
/// goes straight through.
pub fn fan_out<L: ListerWatcher>(upstream: L, branches: usize) -> Vec<FanOut<L>> {
    let branches = branches.max(1);
    let shared = Arc::new(Shared {
        upstream,
        branches,
        calls: Mutex::new(Calls::default()),
        arrivals: tokio::sync::Notify::new(),
        watches: Mutex::new(Watches {
            tees: HashMap::new(),
            opened: 0,
            gone: vec![false; branches],
        }),
    });
    (0..branches)
        .map(|branch| FanOut {
            shared: shared.clone(),
            branch,
        })
        .collect()
}

struct Shared<L> {
    upstream: L,
    branches: usize,
    calls: Mutex<Calls>,
    /// Told when a branch makes a call, is answered or is dropped.
    arrivals: tokio::sync::Notify,
    watches: Mutex<Watches>,
}

/// The answers to calls some branch has not had yet, by call.
#[derive(Default)]
struct Calls {
    /// Per branch: how many calls of each kind it made.
    made: HashMap<(usize, CallKind), usize>,
    /// How many branches have made the k-th call of a kind that is not answered yet.
    arrived: HashMap<(CallKind, usize), usize>,
    /// The calls being made upstream.
    calling: std::collections::HashSet<(CallKind, usize)>,
    /// Branches dropped: they make no more calls.
    gone: usize,
    /// The k-th answer of a kind, with how many branches still have to take it.
    answers: HashMap<(CallKind, usize), (Answer, usize)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum CallKind {
    List,
    Choice(RandomChoice),
    Watch,
}

#[derive(Clone)]
enum Answer {
    List(Result<ListPage, SourceError>),
    Choice(Option<Duration>),
    /// The watch's number; its events are in [`Watches::tees`].
    Watch(Result<usize, SourceError>),
}

struct Watches {
    tees: HashMap<usize, Tee>,
    /// Upstream watches opened so far: the next one's number.
    opened: usize,
    /// Branches dropped: they take nothing more.
    gone: Vec<bool>,
}

/// One upstream watch and the events some branch has not taken yet.
struct Tee {
    upstream: WatchStream,
    /// Events from `base` on.
    buffer: VecDeque<Result<WatchEvent, SourceError>>,
    base: usize,
    /// Per branch: the next event it takes; `None` until it opens this watch.
    next: Vec<Option<usize>>,
    /// Per branch: it dropped its stream of this watch.
    closed: Vec<bool>,
    ended: bool,
    wakers: Vec<Option<Waker>>,
}

impl<L: ListerWatcher> Shared<L> {
    /// This branch's answer to its next call of `kind`, the k-th: made upstream (`call`) once
    /// every branch still running has made its k-th call of that kind, by the last to make it,
    /// and handed to the others. So no branch's call moves a source (a replay's clock) while
    /// another branch is still handling what came before.
    async fn answer<F, Fut>(&self, branch: usize, kind: CallKind, call: F) -> Answer
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Answer>,
    {
        let k = {
            let mut calls = self.calls();
            let made = calls.made.entry((branch, kind)).or_default();
            let k = *made;
            *made += 1;
            *calls.arrived.entry((kind, k)).or_default() += 1;
            k
        };
        loop {
            let notified = self.arrivals.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let mut calls = self.calls();
                if let Some((answer, waiting)) = calls.answers.get_mut(&(kind, k)) {
                    let answer = answer.clone();
                    *waiting -= 1;
                    if *waiting == 0 {
                        calls.answers.remove(&(kind, k));
                    }
                    return answer;
                }
                let arrived = calls.arrived.get(&(kind, k)).copied().unwrap_or(0);
                if arrived + calls.gone >= self.branches && calls.calling.insert((kind, k)) {
                    break;
                }
            }
            notified.await;
        }
        let answer = call().await;
        let mut calls = self.calls();
        let arrived = calls.arrived.remove(&(kind, k)).unwrap_or(1);
        calls.calling.remove(&(kind, k));
        if arrived > 1 {
            calls
                .answers
                .insert((kind, k), (answer.clone(), arrived - 1));
        }
        drop(calls);
        self.arrivals.notify_waiters();
        answer
    }

    fn calls(&self) -> MutexGuard<'_, Calls> {
        self.calls.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn watches(&self) -> MutexGuard<'_, Watches> {
        self.watches.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl<L: ListerWatcher> ListerWatcher for FanOut<L> {
    async fn list(&self, req: &ListRequest) -> Result<ListPage, SourceError> {
        if self.shared.branches == 1 {
            return self.shared.upstream.list(req).await;
        }
        let upstream = &self.shared.upstream;
        let call = || async move { Answer::List(upstream.list(req).await) };
        match self.shared.answer(self.branch, CallKind::List, call).await {
            Answer::List(answer) => answer,
            _ => unreachable!("a list call is answered by a list"),
        }
    }

    async fn watch(&self, req: &WatchRequest) -> Result<WatchStream, SourceError> {
        let shared = &self.shared;
        if shared.branches == 1 {
            return shared.upstream.watch(req).await;
        }
        let call = || async move {
            let opened = shared.upstream.watch(req).await;
            Answer::Watch(opened.map(|upstream| {
                let mut watches = shared.watches();
                let number = watches.opened;
                watches.opened += 1;
                watches.tees.insert(
                    number,
                    Tee {
                        upstream,
                        buffer: VecDeque::new(),
                        base: 0,
                        next: vec![None; shared.branches],
                        closed: vec![false; shared.branches],
                        ended: false,
                        wakers: vec![None; shared.branches],
                    },
                );
                number
            }))
        };
        let number = match shared.answer(self.branch, CallKind::Watch, call).await {
            Answer::Watch(answer) => answer?,
            _ => unreachable!("a watch call is answered by a watch"),
        };
        if let Some(tee) = shared.watches().tees.get_mut(&number) {
            tee.next[self.branch] = Some(tee.base);
        }
        Ok(BranchStream {
            shared: shared.clone(),
            branch: self.branch,
            number,
        }
        .boxed())
    }

    fn describe(&self) -> ResourceTarget {
        self.shared.upstream.describe()
    }

    async fn recorded_choice(&self, choice: RandomChoice) -> Option<Duration> {
        let upstream = &self.shared.upstream;
        if self.shared.branches == 1 {
            return upstream.recorded_choice(choice).await;
        }
        let call = || async move { Answer::Choice(upstream.recorded_choice(choice).await) };
        match (self.shared)
            .answer(self.branch, CallKind::Choice(choice), call)
            .await
        {
            Answer::Choice(answer) => answer,
            _ => unreachable!("a choice is answered by a choice"),
        }
    }
}

impl<L> Drop for FanOut<L> {
    fn drop(&mut self) {
        self.shared
            .calls
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .gone += 1;
        self.shared.arrivals.notify_waiters();
        let mut watches = self
            .shared
            .watches
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(gone) = watches.gone.get_mut(self.branch) {
            *gone = true;
        }
        for tee in watches.tees.values_mut() {
            tee.wake_all();
        }
    }
}

/// One branch's stream of one upstream watch.
struct BranchStream<L> {
    shared: Arc<Shared<L>>,
    branch: usize,
    number: usize,
}

impl Tee {
    /// Every branch still reading has taken every event buffered: the upstream's next one may be
    /// taken. A branch that has not opened this watch yet, and is not gone, holds it back.
    fn all_caught_up(&self, gone: &[bool]) -> bool {
        let end = self.base + self.buffer.len();
        (0..self.next.len())
            .all(|b| gone[b] || self.closed[b] || self.next[b].is_some_and(|next| next >= end))
    }

    /// Drops the events every branch has taken.
    fn trim(&mut self, gone: &[bool]) {
        let least = (0..self.next.len())
            .filter(|b| !gone[*b] && !self.closed[*b])
            .map(|b| self.next[b].unwrap_or(self.base))
            .min()
            .unwrap_or(self.base + self.buffer.len());
        while self.base < least && self.buffer.pop_front().is_some() {
            self.base += 1;
        }
    }

    fn wake_all(&mut self) {
        for waker in self.wakers.iter_mut().filter_map(Option::take) {
            waker.wake();
        }
    }
}

impl<L> Stream for BranchStream<L> {
    type Item = Result<WatchEvent, SourceError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        let mut watches = this
            .shared
            .watches
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let Watches { tees, gone, .. } = &mut *watches;
        let Some(tee) = tees.get_mut(&this.number) else {
            return Poll::Ready(None);
        };
        let next = tee.next[this.branch].unwrap_or(tee.base);
        if let Some(event) = next
            .checked_sub(tee.base)
            .and_then(|i| tee.buffer.get(i))
            .cloned()
        {
            tee.next[this.branch] = Some(next + 1);
            tee.trim(gone);
            return Poll::Ready(Some(event));
        }
        if tee.ended {
            return Poll::Ready(None);
        }
        if !tee.all_caught_up(gone) {
            tee.wakers[this.branch] = Some(cx.waker().clone());
            return Poll::Pending;
        }
        match tee.upstream.poll_next_unpin(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(None) => {
                tee.ended = true;
                tee.wake_all();
                Poll::Ready(None)
            }
            Poll::Ready(Some(event)) => {
                let others =
                    (0..tee.next.len()).any(|b| b != this.branch && !gone[b] && !tee.closed[b]);
                if others {
                    tee.buffer.push_back(event.clone());
                }
                tee.next[this.branch] = Some(next + 1);
                if !others {
                    tee.base = next + 1;
                }
                tee.trim(gone);
                tee.wake_all();
                Poll::Ready(Some(event))
            }
        }
    }
}

impl<L> Drop for BranchStream<L> {
    fn drop(&mut self) {
        let mut watches = self
            .shared
            .watches
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let Watches { tees, gone, .. } = &mut *watches;
        if let Some(tee) = tees.get_mut(&self.number) {
            tee.closed[self.branch] = true;
            tee.trim(gone);
            tee.wake_all();
            if tee.closed.iter().zip(gone.iter()).all(|(c, g)| *c || *g) {
                tees.remove(&self.number);
            }
        }
    }
}
