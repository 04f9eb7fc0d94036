//! A platform as the thread driver's [`Sink`]: sends run on a bounded pool of worker
//! threads, one chat at a time per chat and many chats at once, and their outcomes go back
//! through the driver's asynchronous ack path.
//!
//! The model's `[[reply_to_current]]` names "the user message this turn answers", which
//! only the host knows: it tells the sink through [`PlatformSink::current_messages`] (per
//! stream, right after [`Driver::open`](replystream::driver::Driver::open)), and the sink
//! turns [`ReplyTarget::Current`] into [`ReplyTarget::Id`] of that message before the
//! platform sees the send. A stream the host said nothing about sends such a reply as a plain
//! message (the reply is not lost, only not threaded).
//!
//! The driver thread never waits for HTTP: [`Sink::deliver`] queues the send under its
//! stream's chat and returns [`Delivery::Pending`]. A worker takes the next chat that has
//! work, delivers that chat's oldest send, acks it, and puts the chat back in line if more
//! is waiting. So a chat whose API calls are slow occupies at most one worker, and sends to
//! one chat keep their order even when the engine gave up waiting for one (its delivery
//! timeout) and moved on.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use replystream::driver::{AckHandle, Delivery, Sink, StreamEvent, StreamId};
use replystream::{AbortReason, ReplyTarget, SendRequest};

use crate::{Outcome, Platform};

/// What a worker did with one send, for logs and timelines.
#[derive(Debug)]
#[non_exhaustive]
pub struct DeliveryReport<'a> {
    /// The stream the send belongs to.
    pub stream: StreamId,
    /// The chat it went to.
    pub chat: &'a str,
    /// The send.
    pub send: &'a SendRequest,
    /// What the platform answered.
    pub outcome: &'a Outcome,
    /// When the worker began the call.
    pub began: Instant,
    /// How long the call took.
    pub took: Duration,
}

/// The most worker threads a sink starts (each holds a connection and a thread stack).
pub const MAX_WORKERS: usize = 1024;

type Observer = dyn Fn(&DeliveryReport<'_>) + Send + Sync;
type EventHook = dyn FnMut(StreamId, &StreamEvent) + Send;

/// The driver sink for one platform. See the module docs.
pub struct PlatformSink {
    pool: Arc<Pool>,
    workers: usize,
    spawned: bool,
    chats: HashMap<StreamId, Arc<str>>,
    current: CurrentMessages,
    events: Option<Box<EventHook>>,
}

/// Which user message each stream answers, set by the host (a handle shared with the sink;
/// clone it freely). An entry lasts until its stream is idle (or cancelled).
///
/// ```no_run
/// # use replystream::Config;
/// # use replystream::driver::{Driver, DriverOptions};
/// # use replystream_connections::{sink::PlatformSink, telegram::Telegram};
/// let sink = PlatformSink::new(Telegram::new("123:abc"));
/// let current = sink.current_messages();
/// let driver = Driver::spawn(sink, DriverOptions::default());
/// let stream = driver.open("-100123", Config::default(), 7).unwrap();
/// current.set(stream.id(), "4711"); // before the first input: its sends may need it
/// stream.text("[[reply_to_current]] Yes.").unwrap();
/// ```
#[derive(Clone, Default)]
pub struct CurrentMessages {
    by_stream: Arc<Mutex<HashMap<StreamId, Arc<str>>>>,
}

impl CurrentMessages {
    fn lock(&self) -> MutexGuard<'_, HashMap<StreamId, Arc<str>>> {
        self.by_stream.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `stream` answers the user message `message_id` (a Telegram `message_id`, a Discord
    /// message snowflake, a Slack `ts`). Set it before the stream's first input.
    pub fn set(&self, stream: StreamId, message_id: &str) {
        self.lock().insert(stream, Arc::from(message_id));
    }

    /// The message `stream` answers, if the host said.
    pub fn get(&self, stream: StreamId) -> Option<Arc<str>> {
        self.lock().get(&stream).cloned()
    }

    fn forget(&self, stream: StreamId) {
        self.lock().remove(&stream);
    }
}

impl PlatformSink {
    /// A sink delivering through `platform` on 8 worker threads.
    pub fn new(platform: impl Platform) -> PlatformSink {
        PlatformSink {
            pool: Arc::new(Pool {
                platform: Box::new(platform),
                observer: None,
                state: Mutex::new(State::default()),
                wake: Condvar::new(),
            }),
            workers: 8,
            spawned: false,
            chats: HashMap::new(),
            current: CurrentMessages::default(),
            events: None,
        }
    }

    /// With `workers` worker threads (1 to [`MAX_WORKERS`]; a value outside is brought
    /// inside): how many chats can have a call in flight at once. They start with the
    /// first send.
    #[must_use]
    pub fn with_workers(mut self, workers: usize) -> PlatformSink {
        self.workers = workers.clamp(1, MAX_WORKERS);
        self
    }

    /// The handle through which the host says which user message each stream answers (see
    /// [`CurrentMessages`]); take it before the sink moves into the driver.
    pub fn current_messages(&self) -> CurrentMessages {
        self.current.clone()
    }

    /// Calls `observer` on the worker thread after every platform call, before the ack (a
    /// panic in it is contained: the ack still goes out).
    #[must_use]
    pub fn on_delivery(
        mut self,
        observer: impl Fn(&DeliveryReport<'_>) + Send + Sync + 'static,
    ) -> PlatformSink {
        match Arc::get_mut(&mut self.pool) {
            Some(pool) => pool.observer = Some(Box::new(observer)),
            None => unreachable!("the pool is shared only once workers start"),
        }
        self
    }

    /// Calls `hook` on the driver thread with every stream event (after the sink's own
    /// bookkeeping).
    #[must_use]
    pub fn on_event(
        mut self,
        hook: impl FnMut(StreamId, &StreamEvent) + Send + 'static,
    ) -> PlatformSink {
        self.events = Some(Box::new(hook));
        self
    }

    fn spawn_workers(&mut self) {
        self.spawned = true;
        for i in 0..self.workers {
            let pool = self.pool.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("replystream-{}-{i}", pool.platform.name()))
                .spawn(move || pool.work());
            if spawned.is_err() {
                // Not even one thread: deliveries would wait forever; fail loudly instead.
                // Fewer than asked: the ones running serve every chat.
                assert!(i > 0, "could not start a delivery worker thread");
                break;
            }
        }
    }
}

impl Sink for PlatformSink {
    fn started(&mut self, stream: StreamId, chat: &str) {
        self.chats.insert(stream, Arc::from(chat));
    }

    fn deliver(&mut self, stream: StreamId, send: &SendRequest, acks: &AckHandle) -> Delivery {
        let Some(chat) = self.chats.get(&stream).cloned() else {
            return Delivery::Failed {
                retry_after_ms: None,
                permanent: true,
            };
        };
        if !self.spawned {
            self.spawn_workers();
        }
        let current = self.current.get(stream);
        let mut send = send.clone();
        if send.payload.reply_to == Some(ReplyTarget::Current) {
            send.payload.reply_to = current.as_deref().map(|id| ReplyTarget::Id(id.to_owned()));
        }
        self.pool.submit(
            chat,
            Work::Send(Box::new(Job {
                stream,
                send,
                current,
                acks: acks.clone(),
            })),
        );
        Delivery::Pending
    }

    fn event(&mut self, stream: StreamId, event: &StreamEvent) {
        // A cancelled turn sends nothing more and never goes idle: it ends at its abort.
        let ended = matches!(
            event,
            StreamEvent::Idle(_) | StreamEvent::Aborted(AbortReason::Cancelled)
        );
        if ended {
            let chat = self.chats.remove(&stream);
            self.current.forget(stream);
            // After the stream's last send, in the chat's order (only if it sent anything).
            if let Some(chat) = chat.filter(|_| self.spawned) {
                self.pool.submit(chat, Work::Ended);
            }
        }
        if let Some(hook) = &mut self.events {
            hook(stream, event);
        }
    }
}

impl Drop for PlatformSink {
    /// The driver is done with the sink: workers finish the call they are in and stop.
    fn drop(&mut self) {
        self.pool.lock().stopping = true;
        self.pool.wake.notify_all();
    }
}

/// What a worker does for a chat: deliver a send, or tell the platform a turn ended.
enum Work {
    /// Boxed: a send (with its rendered text) is far larger than the end marker.
    Send(Box<Job>),
    Ended,
}

struct Job {
    stream: StreamId,
    /// With `[[reply_to_current]]` already resolved.
    send: SendRequest,
    /// The user message the stream answers, if the host said.
    current: Option<Arc<str>>,
    acks: AckHandle,
}

#[derive(Default)]
struct State {
    /// Sends waiting per chat, and whether the chat is in `ready` or being served.
    chats: HashMap<Arc<str>, ChatQueue>,
    /// Chats with work and no worker, oldest first.
    ready: VecDeque<Arc<str>>,
    stopping: bool,
}

#[derive(Default)]
struct ChatQueue {
    jobs: VecDeque<Work>,
    scheduled: bool,
}

struct Pool {
    platform: Box<dyn Platform>,
    observer: Option<Box<Observer>>,
    state: Mutex<State>,
    wake: Condvar,
}

impl Pool {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic never happens while the lock is held (only queue operations run under
        // it), but a poisoned lock must not stop deliveries.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn submit(&self, chat: Arc<str>, job: Work) {
        let mut state = self.lock();
        let queue = state.chats.entry(chat.clone()).or_default();
        queue.jobs.push_back(job);
        if !queue.scheduled {
            queue.scheduled = true;
            state.ready.push_back(chat);
            drop(state);
            self.wake.notify_one();
        }
    }

    /// A worker: serve the oldest ready chat's oldest send, until the sink is dropped.
    fn work(&self) {
        loop {
            let (chat, job) = {
                let mut state = self.lock();
                loop {
                    if state.stopping {
                        return;
                    }
                    if let Some(chat) = state.ready.pop_front() {
                        let job = state.chats.get_mut(&chat).and_then(|q| q.jobs.pop_front());
                        if let Some(job) = job {
                            break (chat, job);
                        }
                        state.chats.remove(&chat);
                        continue;
                    }
                    state = self.wake.wait(state).unwrap_or_else(|p| p.into_inner());
                }
            };
            self.run(&chat, job);
            let mut state = self.lock();
            let more = state.chats.get(&chat).is_some_and(|q| !q.jobs.is_empty());
            if more {
                state.ready.push_back(chat);
                drop(state);
                self.wake.notify_one();
            } else {
                state.chats.remove(&chat);
            }
        }
    }

    fn run(&self, chat: &str, work: Work) {
        let job = match work {
            Work::Send(job) => job,
            Work::Ended => {
                let platform = &self.platform;
                // Best effort, like the rest of the platform's calls: a panic stays here.
                let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    platform.turn_ended(chat);
                }));
                return;
            }
        };
        let began = Instant::now();
        let platform = &self.platform;
        // A panicking platform must not take the worker (and the chat's queue) with it.
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            platform.deliver_answering(chat, job.current.as_deref(), &job.send)
        }))
        .unwrap_or_else(|_| crate::Failure::permanent("the platform connection panicked").into());
        if let Some(observer) = &self.observer {
            let report = DeliveryReport {
                stream: job.stream,
                chat,
                send: &job.send,
                outcome: &outcome,
                began,
                took: began.elapsed(),
            };
            // The ack below must go out whatever the observer does.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| observer(&report)));
        }
        let id = job.send.send_id;
        // An ack to a driver that stopped has nowhere to go; nothing else to do with it.
        let _ = match outcome {
            Outcome::Delivered { message_ref } => job.acks.delivered(job.stream, id, message_ref),
            Outcome::Failed(f) => job
                .acks
                .failed(job.stream, id, f.retry_after_ms, f.permanent),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Nowhere;

    impl Platform for Nowhere {
        fn name(&self) -> &'static str {
            "nowhere"
        }

        fn deliver(&self, _: &str, _: &SendRequest) -> Outcome {
            Outcome::delivered(None)
        }
    }

    /// A cancelled turn gets no `Idle` (the driver closes it at the abort): the sink must
    /// forget its chat then too, or a long-running bot keeps one entry per cancelled turn.
    #[test]
    fn the_chat_of_a_cancelled_stream_is_forgotten() {
        let mut sink = PlatformSink::new(Nowhere);
        let (a, b, c) = (StreamId(1), StreamId(2), StreamId(3));
        for id in [a, b, c] {
            sink.started(id, "chat");
        }
        sink.event(a, &StreamEvent::Aborted(AbortReason::Cancelled));
        // A delivery timeout aborts streaming only: the turn goes on to its final.
        sink.event(b, &StreamEvent::Aborted(AbortReason::DeliveryTimeout));
        let mut kept: Vec<StreamId> = sink.chats.keys().copied().collect();
        kept.sort();
        assert_eq!(kept, [b, c]);
    }

    /// An absurd worker count would have the first send try to start that many threads.
    #[test]
    fn the_worker_count_is_kept_within_bounds() {
        let workers = |n| PlatformSink::new(Nowhere).with_workers(n).workers;
        assert_eq!(workers(usize::MAX), MAX_WORKERS);
        assert_eq!(workers(MAX_WORKERS + 1), MAX_WORKERS);
        assert_eq!(workers(MAX_WORKERS), MAX_WORKERS);
        assert_eq!(workers(0), 1);
        assert_eq!(workers(3), 3);
    }
}
