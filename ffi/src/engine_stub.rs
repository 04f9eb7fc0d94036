//! TEMPORARY stand-in for `replystream::Engine` until the real engine lands on `main`.
//! Same public API, toy behaviour: deltas buffer, an idle timer (1000 ms) flushes them as a
//! block, `Finish` flushes the rest as a final; serial delivery; `Idle` once at the end.
#![allow(dead_code, missing_docs, clippy::all)]

use std::collections::VecDeque;

use replystream::{
    AbortReason, Action, Config, Error, Input, Payload, Send, SendId, SendKind, SendOp, Time,
};

pub struct Engine {
    config: Config,
    buf: String,
    pending: VecDeque<(SendKind, Payload)>,
    queue: VecDeque<Action>,
    in_flight: Option<SendId>,
    next_id: u64,
    finished: bool,
    cancelled: bool,
    idle: bool,
    deadline: Option<Time>,
    last_seq: Option<u64>,
}

pub struct Actions<'a>(&'a mut Engine);

impl Iterator for Actions<'_> {
    type Item = Action;
    fn next(&mut self) -> Option<Action> {
        self.0.queue.pop_front()
    }
}

impl Engine {
    pub fn new(config: Config, _seed: u64) -> Result<Engine, Error> {
        config.validate()?;
        Ok(Engine {
            config,
            buf: String::new(),
            pending: VecDeque::new(),
            queue: VecDeque::new(),
            in_flight: None,
            next_id: 1,
            finished: false,
            cancelled: false,
            idle: false,
            deadline: None,
            last_seq: None,
        })
    }

    pub fn push_seq(
        &mut self,
        seq: u64,
        input: Input<'_>,
        now: Time,
    ) -> Result<Actions<'_>, Error> {
        if self.last_seq.is_some_and(|s| seq <= s) {
            return Ok(Actions(self));
        }
        self.last_seq = Some(seq);
        self.push(input, now)
    }

    pub fn push(&mut self, input: Input<'_>, now: Time) -> Result<Actions<'_>, Error> {
        let model_event = !matches!(
            input,
            Input::Timer | Input::Delivered { .. } | Input::DeliveryFailed { .. } | Input::Cancel
        );
        if (self.finished || self.cancelled) && model_event {
            return Err(Error::TurnEnded(input.name()));
        }
        match input {
            Input::TextDelta(t) => {
                self.buf.push_str(t);
                self.arm(Some(now.plus_millis(1000)));
            }
            Input::TextSnapshot(t) if t.len() > self.buf.len() => {
                self.buf.push_str(&t[self.buf.len()..]);
            }
            Input::ToolStart { .. } => self.flush(SendKind::Block),
            Input::ToolResult(p) | Input::Media(p) => self.pending.push_back((SendKind::Tool, p)),
            Input::Timer if self.deadline.is_some_and(|d| d <= now) => {
                self.flush(SendKind::Block);
                self.arm(None);
            }
            Input::Finish => {
                self.flush(SendKind::Final);
                self.finished = true;
                self.arm(None);
            }
            Input::Fail { error } => {
                self.flush(SendKind::Final);
                let mut p = Payload::text(error);
                p.is_error = true;
                self.pending.push_back((SendKind::Final, p));
                self.finished = true;
            }
            Input::Cancel => {
                if !self.cancelled {
                    self.cancelled = true;
                    self.pending.clear();
                    self.queue.push_back(Action::Abort {
                        reason: AbortReason::Cancelled,
                    });
                }
            }
            Input::Delivered { send_id, .. } | Input::DeliveryFailed { send_id, .. } => {
                if self.in_flight != Some(send_id) {
                    return Err(Error::UnknownSend(send_id));
                }
                self.in_flight = None;
            }
            _ => {}
        }
        self.dispatch();
        Ok(Actions(self))
    }

    fn arm(&mut self, deadline: Option<Time>) {
        if self.deadline != deadline {
            self.deadline = deadline;
            self.queue.push_back(Action::ArmTimer {
                deadline: deadline.unwrap_or(Time::NEVER),
            });
        }
    }

    fn flush(&mut self, kind: SendKind) {
        if !self.buf.is_empty() {
            let text = std::mem::take(&mut self.buf);
            self.pending.push_back((kind, Payload::text(text)));
        }
    }

    fn dispatch(&mut self) {
        if self.cancelled || self.in_flight.is_some() {
            return;
        }
        if let Some((kind, payload)) = self.pending.pop_front() {
            let id = SendId(self.next_id);
            self.next_id += 1;
            self.in_flight = Some(id);
            self.queue.push_back(Action::Send(Send {
                send_id: id,
                kind,
                op: SendOp::Create,
                payload,
            }));
        } else if self.finished && !self.idle {
            self.idle = true;
            self.queue.push_back(Action::Idle);
        }
    }

    pub fn poll_action(&mut self) -> Option<Action> {
        self.queue.pop_front()
    }

    pub fn poll_timeout(&self) -> Option<Time> {
        self.deadline
    }

    pub fn is_done(&self) -> bool {
        self.idle || self.cancelled
    }

    pub fn config(&self) -> &Config {
        &self.config
    }
}
