//! Host payloads (media, tool results): caption merge with the buffered text, and the
//! dedupe of payloads already sent or pending.

use smallvec::SmallVec;

use super::Engine;
use crate::action::SendKind;
use crate::payload::{Payload, ReplyTarget};
use crate::time::Time;

impl Engine {
    /// A media payload: takes the buffered text as its caption when they agree on reply
    /// target, voice flag and lane; otherwise the buffer goes out first.
    pub(super) fn on_media(&mut self, mut payload: Payload, _now: Time) {
        if self.is_duplicate_host_payload(&payload) {
            self.stats.payloads_deduped += 1;
            return;
        }
        // A boundary: the text before the media ends the live preview's segment.
        self.preview_boundary();
        let mut spans = SmallVec::new();
        let compatible = self.coalescer.buffered().is_some_and(|b| {
            b.meta.reply_to == payload.reply_to
                && b.meta.audio_as_voice == payload.audio_as_voice
                && b.meta.lane == payload.lane
                && payload.text.trim().is_empty()
        });
        if compatible && let Some(caption) = self.coalescer.take() {
            let (text_payload, caption_spans) = Self::coalesced_payload(caption);
            payload.text = text_payload.text;
            spans = caption_spans;
        } else {
            self.coalescer.flush(&mut self.coalesced);
            self.enqueue_coalesced();
        }
        self.enqueue(SendKind::Block, payload, spans);
    }

    pub(super) fn enqueue_host_payload(&mut self, kind: SendKind, payload: Payload) {
        if self.is_duplicate_host_payload(&payload) {
            self.stats.payloads_deduped += 1;
            return;
        }
        self.enqueue(kind, payload, SmallVec::new());
    }

    /// A host payload whose key (trimmed text, media, reply target) was already sent,
    /// is pending, or is buffered in this turn.
    fn is_duplicate_host_payload(&self, payload: &Payload) -> bool {
        let key = PayloadKey::of(payload);
        self.dispatcher.pending_payloads().any(|p| key.matches(p)) || self.sent_keys.contains(&key)
    }

    pub(super) fn media_already_sent(&self, media: &str) -> bool {
        self.sent_keys
            .iter()
            .any(|k| k.media.iter().any(|m| m == media))
            || self
                .dispatcher
                .pending_payloads()
                .any(|p| p.media.iter().any(|m| m == media))
    }
}

/// The dedupe key of a payload: trimmed text, media list, reply target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct PayloadKey {
    text: String,
    media: Vec<String>,
    reply_to: Option<ReplyTarget>,
}

impl PayloadKey {
    /// Whether the payload had `media` among its media items.
    pub(super) fn has_media(&self, media: &str) -> bool {
        self.media.iter().any(|m| m == media)
    }

    /// Whether `p` has this key, compared in place (no copy of its text).
    fn matches(&self, p: &Payload) -> bool {
        self.text == p.text.trim() && self.media == p.media && self.reply_to == p.reply_to
    }

    pub(super) fn of(p: &Payload) -> PayloadKey {
        PayloadKey {
            text: p.text.trim().to_owned(),
            media: p.media.clone(),
            reply_to: p.reply_to.clone(),
        }
    }
}
