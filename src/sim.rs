//! A virtual-clock host: drives an [`Engine`] the way a real host would, without a clock.
//!
//! [`Sim`] feeds inputs at set times, acks each send after a latency chosen by a policy (or
//! fails it, or never answers it), jumps to the next deadline, and records every action with
//! its time. The tests use it to read like scripts, the CLI's `demo` and `replay` use it to
//! show a timeline, and a user can use it to try a configuration:
//!
//! ```
//! use replystream::sim::Sim;
//! use replystream::{Config, Engine, Input};
//!
//! let mut sim = Sim::new(Engine::new(Config::default(), 7).unwrap());
//! sim.push(Input::TextDelta("Hello")).at(1500).push(Input::Finish).run_until_idle();
//! assert_eq!(sim.delivered_texts(), ["Hello"]);
//! ```
//!
//! Everything here is deterministic: the same inputs, times, policy and seed give the same
//! log.
//!
//! Behind the host sits a [`Chat`]: a Telegram-like message store that applies every
//! delivered send (create, edit, delete, draft), assigns each new message an id that the host
//! hands back as `Delivered { message_ref }`, answers an edit that changes nothing with
//! "message is not modified" (which the host reports as delivered), and, when given a limit,
//! refuses longer texts. After a turn, [`Chat::texts`] is what a user reads.
//!
//! A chat made with [`Chat::strict`] is strict like a real platform ([`Platform`]): it
//! posts each send's text in its format, refuses Telegram HTML that does not parse ("can't
//! parse entities"), and counts its limits on what it shows, as the platform does (Telegram:
//! the text after entity parsing, in UTF-16 units, 4096, captions 1024; Discord 2000
//! characters; Slack 40 000; WhatsApp 4096, captions 1024).

mod platform;
mod telegram_html;

pub use platform::Platform;

use crate::action::{AbortReason, Action, MessageKey, SendKind, SendOp, SendRequest};
use crate::engine::Engine;
use crate::input::{Input, SendId};
use crate::payload::Lane;
use crate::text::metric::LengthMetric;
use crate::time::Time;

/// What the simulated host does with one send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Ack {
    /// Delivered after this many milliseconds.
    Deliver {
        /// Latency.
        after_ms: u64,
    },
    /// Failed after this many milliseconds.
    Fail {
        /// Latency.
        after_ms: u64,
        /// The `retry_after` reported (a 429).
        retry_after_ms: Option<u64>,
        /// Retrying will not help.
        permanent: bool,
    },
    /// Never answered (hits the delivery timeout).
    Hang,
}

/// Chooses the fate of the n-th send (0-based, retries included).
pub type AckPolicy = Box<dyn FnMut(&SendRequest, usize) -> Ack>;

/// One message in a [`Chat`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ChatMessage {
    /// The id the chat gave it (the `message_ref` of its create's ack).
    pub id: String,
    /// The key the engine created it under, if any.
    pub key: Option<MessageKey>,
    /// What it shows now.
    pub text: String,
    /// Its media.
    pub media: Vec<String>,
    /// The kind of the send that created it.
    pub kind: SendKind,
    /// The lane of the send that created it.
    pub lane: Lane,
    /// How many times it was edited (edits that changed nothing excluded).
    pub edits: u32,
}

/// How a [`Chat`] answered a send.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChatAnswer {
    /// Done; a new message's id.
    Done {
        /// The new message's id (`None` for edits, deletes and drafts).
        message_ref: Option<String>,
    },
    /// "Message is not modified": the edit or draft would change nothing. Hosts report it
    /// as delivered.
    NotModified,
    /// Refused for good: too long, or no such message.
    Refused {
        /// Why, as the platform would say it.
        reason: &'static str,
    },
}

/// Counters of what a [`Chat`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ChatCounts {
    /// Messages created.
    pub creates: u64,
    /// Messages edited (edits that changed nothing excluded).
    pub edits: u64,
    /// Messages deleted.
    pub deletes: u64,
    /// Draft bubble updates.
    pub drafts: u64,
    /// Edits and drafts answered "not modified".
    pub not_modified: u64,
    /// Sends refused.
    pub refused: u64,
}

/// A Telegram-like chat: applies sends to a message store. See the module docs.
#[derive(Clone, Debug, Default)]
pub struct Chat {
    /// The messages, oldest first.
    pub messages: Vec<ChatMessage>,
    /// Draft bubbles showing, by key. A new message replaces every draft (as on Telegram).
    pub drafts: Vec<(MessageKey, String)>,
    /// The longest text accepted, in a metric (Telegram: 4096 UTF-16 units); `None`: no limit.
    /// On a strict chat, counted on what the platform shows, on top of its own limits
    /// (e.g. the text limit the host configured).
    pub limit: Option<(usize, LengthMetric)>,
    /// The platform whose rules the chat applies ([`Platform::Markdown`]: none).
    pub platform: Platform,
    /// Why the last refused send was refused, as the platform said it.
    pub last_refusal: Option<String>,
    /// What it did.
    pub counts: ChatCounts,
    /// Keep only the messages created under a key (the ones the engine may edit or delete);
    /// count the others. For long runs (the CLI's `demo` on a large reply), so the chat does
    /// not hold the whole reply.
    pub keyed_only: bool,
    /// Messages not kept (`keyed_only`).
    not_kept: usize,
    next_id: u64,
}

impl Chat {
    /// A chat that refuses texts longer than `limit` in `metric`.
    pub fn with_limit(limit: usize, metric: LengthMetric) -> Chat {
        Chat {
            limit: Some((limit, metric)),
            ..Chat::default()
        }
    }

    /// A chat strict like `platform`: it keeps and counts what the platform shows for each
    /// send (see [`Platform`]) and refuses what the platform refuses.
    ///
    /// ```
    /// use replystream::sim::{Chat, Platform, Sim};
    /// use replystream::{ChannelProfile, Config, Engine, Input};
    ///
    /// let engine = Engine::new(Config::for_channel(&ChannelProfile::TELEGRAM), 1).unwrap();
    /// let mut sim = Sim::new(engine);
    /// sim.chat = Chat::strict(Platform::Telegram);
    /// sim.push(Input::TextDelta("**Done** & <dusted>")).push(Input::Finish).run_until_idle();
    /// assert_eq!(sim.chat.counts.refused, 0);
    /// assert_eq!(sim.chat.texts(), ["<b>Done</b> &amp; &lt;dusted&gt;"]);
    /// ```
    pub fn strict(platform: Platform) -> Chat {
        Chat {
            platform,
            ..Chat::default()
        }
    }

    /// A chat that keeps only the messages created under a key (see [`Chat::keyed_only`]).
    pub fn keyed_only() -> Chat {
        Chat {
            keyed_only: true,
            ..Chat::default()
        }
    }

    /// How many messages the chat shows, kept or not.
    pub fn shown_messages(&self) -> usize {
        self.messages.len() + self.not_kept
    }

    /// The texts of the messages, oldest first: what a user reads.
    pub fn texts(&self) -> Vec<&str> {
        self.messages.iter().map(|m| m.text.as_str()).collect()
    }

    /// The texts of the messages on one lane, oldest first.
    pub fn lane_texts(&self, lane: Lane) -> Vec<&str> {
        self.messages
            .iter()
            .filter(|m| m.lane == lane)
            .map(|m| m.text.as_str())
            .collect()
    }

    /// Why `shown` (what the platform shows for a send) is too long, if it is: over the
    /// chat's limit, or the platform's own (its caption limit for a message with media).
    fn too_long(&self, shown: &str, caption: bool) -> Option<&'static str> {
        if self
            .limit
            .is_some_and(|(max, metric)| metric.len(shown) > max)
        {
            return Some("message is too long");
        }
        let (own, reason) = match caption {
            true => (self.platform.caption_limit(), "message caption is too long"),
            false => (self.platform.text_limit(), "message is too long"),
        };
        own.is_some_and(|(max, metric)| metric.len(shown) > max)
            .then_some(reason)
    }

    fn find(&self, message_ref: Option<&str>) -> Option<usize> {
        let id = message_ref?;
        self.messages.iter().position(|m| m.id == id)
    }

    /// Applies one send, as the platform would when it answers it.
    pub fn apply(&mut self, send: &SendRequest) -> ChatAnswer {
        let refused = |counts: &mut ChatCounts, reason| {
            counts.refused += 1;
            ChatAnswer::Refused { reason }
        };
        let shown = match send.op {
            SendOp::Delete { .. } => Ok(String::new()),
            _ => self.platform.read(send),
        };
        let shown = match shown {
            Ok(shown) => shown,
            Err(why) => {
                self.last_refusal = Some(why);
                return refused(&mut self.counts, "Bad Request: can't parse entities");
            }
        };
        // What the chat keeps: what the host posted (the Markdown on a Markdown chat).
        let text = match self.platform {
            Platform::Markdown => &send.payload.text,
            _ => &send.text().to_owned(),
        };
        let caption = !send.payload.media.is_empty();
        if let Some(reason) = self.too_long(&shown, caption) {
            self.last_refusal = Some(reason.to_owned());
            return refused(&mut self.counts, reason);
        }
        match send.op {
            SendOp::Create { key } => {
                if text.trim().is_empty() && send.payload.media.is_empty() {
                    return refused(&mut self.counts, "message text is empty");
                }
                self.next_id += 1;
                let id = format!("m{}", self.next_id);
                self.drafts.clear();
                self.counts.creates += 1;
                if self.keyed_only && key.is_none() {
                    self.not_kept += 1;
                    return ChatAnswer::Done {
                        message_ref: Some(id),
                    };
                }
                self.messages.push(ChatMessage {
                    id: id.clone(),
                    key,
                    text: text.clone(),
                    media: send.payload.media.clone(),
                    kind: send.kind,
                    lane: send.payload.lane,
                    edits: 0,
                });
                ChatAnswer::Done {
                    message_ref: Some(id),
                }
            }
            SendOp::Edit { .. } => {
                let Some(i) = self.find(send.message_ref.as_deref()) else {
                    return refused(&mut self.counts, "message to edit not found");
                };
                if text.trim().is_empty() {
                    return refused(&mut self.counts, "message text is empty");
                }
                let m = &mut self.messages[i];
                if m.text == *text {
                    self.counts.not_modified += 1;
                    return ChatAnswer::NotModified;
                }
                m.text.clone_from(text);
                m.edits += 1;
                self.counts.edits += 1;
                ChatAnswer::Done { message_ref: None }
            }
            SendOp::Delete { key } => {
                if let Some(i) = self.find(send.message_ref.as_deref()) {
                    self.messages.remove(i);
                } else if let Some(i) = self.drafts.iter().position(|(k, _)| *k == key) {
                    self.drafts.remove(i);
                } else {
                    return refused(&mut self.counts, "message to delete not found");
                }
                self.counts.deletes += 1;
                ChatAnswer::Done { message_ref: None }
            }
            SendOp::Draft { key } => {
                match self.drafts.iter_mut().find(|(k, _)| *k == key) {
                    Some((_, shown)) if shown == text => {
                        self.counts.not_modified += 1;
                        return ChatAnswer::NotModified;
                    }
                    Some((_, shown)) => shown.clone_from(text),
                    None => self.drafts.push((key, text.clone())),
                }
                self.counts.drafts += 1;
                ChatAnswer::Done { message_ref: None }
            }
        }
    }
}

#[derive(Debug)]
struct PendingAck {
    due: u64,
    order: u64,
    send_id: SendId,
    ack: Ack,
}

/// The virtual-clock host. See the module docs.
pub struct Sim {
    /// The engine being driven.
    pub engine: Engine,
    /// The current virtual time, in ms.
    pub now: u64,
    /// Every action with the time it was emitted.
    pub log: Vec<(u64, Action)>,
    /// Sends confirmed delivered, with the time of the ack.
    pub delivered: Vec<(u64, SendRequest)>,
    /// Errors returned by `push`, with the input's name.
    pub errors: Vec<(u64, String)>,
    policy: AckPolicy,
    pending: Vec<PendingAck>,
    sends_seen: usize,
    order: u64,
    /// The deadline last armed by the engine.
    deadline: Option<u64>,
    in_flight: usize,
    /// The largest number of sends in flight at once.
    pub max_in_flight: usize,
    /// `Idle` was emitted (kept apart from the log, which a long run may drain).
    idle: bool,
    /// Texts of sends in flight, by id (for the delivered log).
    outstanding: Vec<SendRequest>,
    /// The chat behind the host: every delivered send is applied to it.
    pub chat: Chat,
}

impl Sim {
    /// A harness that acks every send immediately.
    pub fn new(engine: Engine) -> Sim {
        Sim::with_policy(engine, Box::new(|_, _| Ack::Deliver { after_ms: 0 }))
    }

    /// A harness that acks every send after `latency_ms`.
    pub fn with_latency(engine: Engine, latency_ms: u64) -> Sim {
        Sim::with_policy(
            engine,
            Box::new(move |_, _| Ack::Deliver {
                after_ms: latency_ms,
            }),
        )
    }

    /// A harness with a custom ack policy.
    pub fn with_policy(engine: Engine, policy: AckPolicy) -> Sim {
        Sim {
            engine,
            now: 0,
            log: Vec::new(),
            delivered: Vec::new(),
            errors: Vec::new(),
            policy,
            pending: Vec::new(),
            sends_seen: 0,
            order: 0,
            deadline: None,
            in_flight: 0,
            max_in_flight: 0,
            idle: false,
            outstanding: Vec::new(),
            chat: Chat::default(),
        }
    }

    /// Pushes `input` at the current time and handles the actions.
    pub fn push(&mut self, input: Input<'_>) -> &mut Sim {
        let name = input.name();
        let result = self
            .engine
            .push(input, Time::from_millis(self.now))
            .map(Iterator::collect);
        self.take_actions(name, result);
        self
    }

    fn take_actions(&mut self, name: &str, result: Result<Vec<Action>, crate::error::Error>) {
        match result {
            Ok(actions) => {
                for a in actions {
                    self.on_action(a);
                }
            }
            Err(e) => self.errors.push((self.now, format!("{name}: {e}"))),
        }
    }

    /// Pushes `input` carrying sequence number `seq` at the current time.
    pub fn push_seq(&mut self, seq: u64, input: Input<'_>) -> &mut Sim {
        let name = input.name();
        let result = self
            .engine
            .push_seq(seq, input, Time::from_millis(self.now))
            .map(Iterator::collect);
        self.take_actions(name, result);
        self
    }

    /// Pushes each delta of `text` split into pieces of `size` chars, `gap_ms` apart.
    pub fn stream(&mut self, text: &str, size: usize, gap_ms: u64) -> &mut Sim {
        let mut start = 0;
        let bounds: Vec<usize> = text
            .char_indices()
            .map(|(i, _)| i)
            .chain([text.len()])
            .collect();
        let mut k = 0;
        while start < text.len() {
            k = (k + size.max(1)).min(bounds.len() - 1);
            let end = bounds[k];
            self.push(Input::TextDelta(&text[start..end]));
            start = end;
            if start < text.len() && gap_ms > 0 {
                let t = self.now.saturating_add(gap_ms);
                self.at(t);
            }
        }
        self
    }

    /// Advances the clock to `t`, delivering acks and timer inputs due on the way, in order.
    pub fn at(&mut self, t: u64) -> &mut Sim {
        loop {
            let next_ack = self.pending.iter().map(|p| (p.due, p.order)).min();
            let next_timer = self.deadline;
            let next = match (next_ack, next_timer) {
                (Some((a, _)), Some(d)) => a.min(d),
                (Some((a, _)), None) => a,
                (None, Some(d)) => d,
                (None, None) => break,
            };
            if next > t {
                break;
            }
            self.now = self.now.max(next);
            if next_ack.is_some_and(|(a, _)| a == next) {
                let i = self
                    .pending
                    .iter()
                    .enumerate()
                    .min_by_key(|(_, p)| (p.due, p.order))
                    .map(|(i, _)| i)
                    .expect("pending ack");
                let p = self.pending.remove(i);
                self.deliver_ack(p);
            } else {
                self.deadline = None;
                self.push(Input::Timer);
            }
        }
        self.now = self.now.max(t);
        self
    }

    /// Advances the clock by `ms`.
    pub fn wait(&mut self, ms: u64) -> &mut Sim {
        let t = self.now.saturating_add(ms);
        self.at(t)
    }

    /// Runs acks and timers until the engine is idle or nothing more can happen
    /// (bounded: gives up after an hour of virtual time).
    pub fn run_until_idle(&mut self) -> &mut Sim {
        let limit = self.now.saturating_add(3_600_000);
        while !self.is_idle() && self.now < limit {
            let next_ack = self.pending.iter().map(|p| p.due).min();
            let next = match (next_ack, self.deadline) {
                (Some(a), Some(d)) => a.min(d),
                (a, d) => match a.or(d) {
                    Some(x) => x,
                    None => break,
                },
            };
            self.at(next);
        }
        self
    }

    fn deliver_ack(&mut self, p: PendingAck) {
        let pos = self.outstanding.iter().position(|s| s.send_id == p.send_id);
        self.in_flight = self.in_flight.saturating_sub(1);
        match p.ack {
            Ack::Deliver { .. } => {
                let Some(i) = pos else {
                    self.push(Input::Delivered {
                        send_id: p.send_id,
                        message_ref: None,
                    });
                    return;
                };
                let send = self.outstanding.remove(i);
                match self.chat.apply(&send) {
                    ChatAnswer::Done { message_ref } => {
                        self.delivered.push((self.now, send));
                        self.push(Input::Delivered {
                            send_id: p.send_id,
                            message_ref: message_ref.as_deref(),
                        });
                    }
                    // "Message is not modified" counts as delivered.
                    ChatAnswer::NotModified => {
                        self.delivered.push((self.now, send));
                        self.push(Input::Delivered {
                            send_id: p.send_id,
                            message_ref: None,
                        });
                    }
                    ChatAnswer::Refused { .. } => {
                        self.push(Input::DeliveryFailed {
                            send_id: p.send_id,
                            retry_after_ms: None,
                            permanent: true,
                        });
                    }
                }
            }
            Ack::Fail {
                retry_after_ms,
                permanent,
                ..
            } => {
                if let Some(i) = pos {
                    self.outstanding.remove(i);
                }
                self.push(Input::DeliveryFailed {
                    send_id: p.send_id,
                    retry_after_ms,
                    permanent,
                });
            }
            Ack::Hang => {}
        }
    }

    /// The `(time, action)` log rendered as text, for determinism checks.
    pub fn log_text(&self) -> String {
        self.log
            .iter()
            .map(|(t, a)| format!("{t} {a:?}\n"))
            .collect()
    }

    fn on_action(&mut self, action: Action) {
        self.log.push((self.now, action.clone()));
        match action {
            Action::Send(send) => {
                let n = self.sends_seen;
                self.sends_seen += 1;
                let ack = (self.policy)(&send, n);
                // A hung send is abandoned by the host; the engine moves on after its timeout.
                if ack != Ack::Hang {
                    self.in_flight += 1;
                }
                self.max_in_flight = self.max_in_flight.max(self.in_flight);
                let due = match ack {
                    Ack::Deliver { after_ms } | Ack::Fail { after_ms, .. } => {
                        Some(self.now.saturating_add(after_ms))
                    }
                    Ack::Hang => None,
                };
                self.outstanding.push(send.clone());
                if let Some(due) = due {
                    self.order += 1;
                    self.pending.push(PendingAck {
                        due,
                        order: self.order,
                        send_id: send.send_id,
                        ack,
                    });
                }
            }
            Action::ArmTimer { deadline } => {
                self.deadline = deadline.map(Time::as_millis);
            }
            Action::Idle => self.idle = true,
            Action::Abort { .. } => {}
        }
    }

    /// Whether `Idle` was emitted.
    pub fn is_idle(&self) -> bool {
        self.idle
    }

    /// Removes and returns what was logged so far, oldest first. A long run (the CLI's
    /// `demo` on a large reply) reads its timeline as it goes this way and keeps the log
    /// short; the methods that read the log see only what was not drained.
    pub fn drain_log(&mut self) -> std::vec::Drain<'_, (u64, Action)> {
        self.log.drain(..)
    }

    /// Removes and returns the deliveries recorded so far, oldest first (see
    /// [`Sim::drain_log`]).
    pub fn drain_delivered(&mut self) -> std::vec::Drain<'_, (u64, SendRequest)> {
        self.delivered.drain(..)
    }

    /// Every send, in emission order, with its time.
    pub fn sends(&self) -> Vec<(u64, SendRequest)> {
        self.log
            .iter()
            .filter_map(|(t, a)| match a {
                Action::Send(s) => Some((*t, s.clone())),
                _ => None,
            })
            .collect()
    }

    /// Texts of every send, in emission order.
    pub fn sent_texts(&self) -> Vec<String> {
        self.sends()
            .into_iter()
            .map(|(_, s)| s.payload.text)
            .collect()
    }

    /// Texts of sends confirmed delivered, in delivery order.
    pub fn delivered_texts(&self) -> Vec<String> {
        self.delivered
            .iter()
            .map(|(_, s)| s.payload.text.clone())
            .collect()
    }

    /// Kinds of the sends, in emission order.
    pub fn sent_kinds(&self) -> Vec<SendKind> {
        self.sends().into_iter().map(|(_, s)| s.kind).collect()
    }

    /// Abort reasons emitted.
    pub fn aborts(&self) -> Vec<AbortReason> {
        self.log
            .iter()
            .filter_map(|(_, a)| match a {
                Action::Abort { reason } => Some(*reason),
                _ => None,
            })
            .collect()
    }
}
