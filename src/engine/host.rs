//! Host payloads (tool results, media, finals) and media captions.
//!
//! **Dedupe only what the host repeats** (SPEC §6). What the model wrote — its text and its
//! `MEDIA:` directives — is delivered as often as it wrote it. A payload the host submits is
//! dropped when its key (trimmed text, media list, reply target) was already delivered, is
//! queued or in flight, or is the text buffered in the coalescer: gateways resend tool
//! summaries and media, and the user should see each once. Host payloads also get the token
//! rules on their whole text first (SPEC §2), so `{"action":"NO_REPLY"}` with an image sends
//! the image alone.
//!
//! **Captions.** A media payload takes the text buffered in the coalescer as its caption, one
//! message, unless they truly conflict: a different voice flag or lane, media that brings its
//! own text, or a media reply target that differs from the caption's. Media without a target
//! takes the caption's.

use std::hash::{Hash, Hasher};

use smallvec::SmallVec;

use super::Engine;
use crate::action::SendKind;
use crate::payload::Payload;
use crate::stage::tokens::normalize_text;
use crate::time::Time;

impl Engine {
    /// Media from the host or a tool: token rules, dedupe, then caption merge.
    pub(super) fn on_host_media(&mut self, mut payload: Payload, now: Time) {
        if !self.prepare_host_payload(&mut payload) {
            return;
        }
        self.attach_media(payload, now);
    }

    /// A tool summary from the host: token rules, dedupe, then queued.
    pub(super) fn on_tool_result(&mut self, mut payload: Payload) {
        if !self.prepare_host_payload(&mut payload) {
            return;
        }
        self.enqueue(SendKind::Tool, payload, SmallVec::new());
    }

    /// Applies the token rules to a host payload's text and checks it against what was
    /// already sent. False when nothing is left to send.
    fn prepare_host_payload(&mut self, payload: &mut Payload) -> bool {
        self.normalize_host_text(payload);
        if payload.is_empty() {
            return false;
        }
        if self.is_duplicate_host_payload(payload) {
            self.stats.payloads_deduped += 1;
            return false;
        }
        true
    }

    /// The token rules on a host payload's whole text.
    pub(super) fn normalize_host_text(&self, payload: &mut Payload) {
        let text = normalize_text(&self.token_config, &payload.text);
        if text.len() != payload.text.len() {
            payload.text = text.to_owned();
        }
    }

    /// A media payload (the host's, or a `MEDIA:` directive of the model): takes the buffered
    /// text as its caption unless they conflict (module docs); otherwise the buffer goes out
    /// first.
    pub(super) fn attach_media(&mut self, mut payload: Payload, _now: Time) {
        // A boundary: the text before the media ends the live preview's segment.
        self.preview_boundary();
        let mut spans = SmallVec::new();
        let compatible = self.coalescer.buffered().is_some_and(|b| {
            payload
                .reply_to
                .as_ref()
                .is_none_or(|t| b.meta.reply_to.as_ref() == Some(t))
                && b.meta.audio_as_voice == payload.audio_as_voice
                && b.meta.lane == payload.lane
                && payload.text.trim().is_empty()
        });
        if compatible && let Some(caption) = self.coalescer.take() {
            let (text_payload, caption_spans) = Self::coalesced_payload(caption);
            payload.text = text_payload.text;
            if payload.reply_to.is_none() {
                payload.reply_to = text_payload.reply_to;
            }
            spans = caption_spans;
        } else {
            self.coalescer.flush(&mut self.coalesced);
            self.enqueue_coalesced();
        }
        self.enqueue(SendKind::Block, payload, spans);
    }

    /// A host payload whose key (trimmed text, media, reply target) was already delivered,
    /// is queued or in flight, or is the text buffered in the coalescer.
    fn is_duplicate_host_payload(&self, payload: &Payload) -> bool {
        let key = PayloadKey::of(payload);
        let buffered = self.coalescer.buffered().is_some_and(|b| {
            payload.media.is_empty()
                && b.text.trim() == payload.text.trim()
                && b.meta.reply_to == payload.reply_to
        });
        buffered
            || self.sent_keys.contains(&key)
            || self
                .dispatcher
                .pending_payloads()
                .any(|p| PayloadKey::of(p) == key)
    }

    /// Whether media `url` was delivered, or is queued or in flight, in this turn.
    pub(super) fn media_already_sent(&self, url: &str) -> bool {
        self.sent_media.iter().any(|m| m == url)
            || self
                .dispatcher
                .pending_payloads()
                .any(|p| p.media.iter().any(|m| m == url))
    }

    /// Remembers what a delivered payload carried, for host-payload dedupe.
    pub(super) fn remember_delivered(&mut self, payload: &Payload) {
        self.sent_keys.push(PayloadKey::of(payload));
        for url in &payload.media {
            if !self.sent_media.contains(url) {
                self.sent_media.push(url.clone());
            }
        }
    }
}

/// The dedupe key of a payload — trimmed text, media list, reply target — as a 64-bit hash,
/// so the engine keeps 8 bytes per delivered payload rather than a copy of its text. Two
/// different payloads share a key with probability about 2⁻⁶⁴ per pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct PayloadKey(u64);

impl PayloadKey {
    pub(super) fn of(p: &Payload) -> PayloadKey {
        // `DefaultHasher::new` always starts from the same keys: the same payload gives the
        // same key on every run.
        let mut h = std::collections::hash_map::DefaultHasher::new();
        p.text.trim().hash(&mut h);
        p.media.hash(&mut h);
        p.reply_to.hash(&mut h);
        PayloadKey(h.finish())
    }
}
