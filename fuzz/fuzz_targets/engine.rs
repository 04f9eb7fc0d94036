//! Fuzzes the engine with arbitrary event sequences: any input, in any order, at any time,
//! with acks for real, stale or invented send ids. Checks that nothing panics (SPEC §13,
//! invariant 9), that every send respects the channel's limits, and that at most one send is
//! in flight.
#![no_main]

use libfuzzer_sys::fuzz_target;
use replystream::{Action, ChannelProfile, Config, Engine, Input, Payload, SendId, Time};

/// Reads the fuzz input as a little program of engine events.
struct Program<'a> {
    data: &'a [u8],
}

impl<'a> Program<'a> {
    fn byte(&mut self) -> Option<u8> {
        let (&b, rest) = self.data.split_first()?;
        self.data = rest;
        Some(b)
    }

    /// A short text taken from the input (lossily valid UTF-8).
    fn text(&mut self) -> String {
        let n = usize::from(self.byte().unwrap_or(0) % 48);
        let n = n.min(self.data.len());
        let (t, rest) = self.data.split_at(n);
        self.data = rest;
        String::from_utf8_lossy(t).into_owned()
    }
}

fuzz_target!(|data: &[u8]| {
    let mut p = Program { data };
    let Some(head) = p.byte() else { return };
    let profile = ChannelProfile::ALL[usize::from(head) % ChannelProfile::ALL.len()];
    let mut config = Config::for_channel(&profile);
    let small = p.byte().unwrap_or(0);
    config.chunk_min = 1 + usize::from(small % 64);
    config.chunk_max = config.chunk_min + usize::from(p.byte().unwrap_or(0));
    config.coalesce_idle_ms = u64::from(p.byte().unwrap_or(0)) * 10;
    config.delivery_timeout_ms = u64::from(p.byte().unwrap_or(0)) * 20;
    let Ok(mut engine) = Engine::new(config, u64::from(head)) else { return };
    let limit = engine.config().text_limit;
    let metric = engine.config().metric;
    let max_lines = engine.config().max_lines;

    let mut now = 0u64;
    let mut sent: Vec<SendId> = Vec::new();
    // The send in flight and when it left; it is abandoned once its timeout has passed.
    let timeout = engine.config().delivery_timeout_ms;
    let mut in_flight: Option<(SendId, u64)> = None;
    while let Some(op) = p.byte() {
        now += u64::from(op >> 4) * 37;
        let text = p.text();
        let pick = |i: u8| sent.get(usize::from(i) % sent.len().max(1)).copied().unwrap_or(SendId(u64::from(i)));
        let input = match op % 19 {
            0 => Input::MessageStart,
            1..=5 => Input::TextDelta(&text),
            6 => Input::TextSnapshot(&text),
            7 => Input::TextEnd(if op & 0x20 != 0 { Some(&text) } else { None }),
            8 => Input::ThinkingDelta(&text),
            9 => Input::ThinkingEnd,
            10 => Input::ToolStart { name: &text },
            11 => Input::ToolResult(Payload::text(text.clone())),
            12 => Input::Media(Payload { media: vec![text.clone()], ..Payload::default() }),
            13 => Input::MessageEnd(None),
            14 => Input::Finish,
            15 => Input::Fail { error: &text },
            16 => Input::Timer,
            17 => Input::Delivered { send_id: in_flight.map_or(pick(op), |f| f.0), message_ref: None },
            _ => Input::DeliveryFailed {
                send_id: in_flight.map_or(pick(op), |f| f.0),
                retry_after_ms: (op & 0x40 != 0).then_some(u64::from(op)),
                permanent: op & 0x80 != 0,
            },
        };
        if op % 64 == 63 {
            let _ = engine.push(Input::Cancel, Time::from_millis(now));
        }
        let acked = matches!(input, Input::Delivered { .. } | Input::DeliveryFailed { .. });
        let Ok(actions) = engine.push(input, Time::from_millis(now)) else { continue };
        if acked {
            in_flight = None;
        }
        for action in actions {
            if let Action::Send(send) = action {
                let abandoned = in_flight.is_some_and(|(_, at)| timeout > 0 && now >= at + timeout);
                assert!(in_flight.is_none() || abandoned, "two sends in flight");
                let t = &send.payload.text;
                assert!(metric.len(t) <= limit, "send over the limit");
                if let Some(max) = max_lines {
                    assert!(t.split('\n').count() <= max, "send over the line cap");
                }
                assert!(!t.trim().is_empty() || !send.payload.media.is_empty(), "empty send");
                sent.push(send.send_id);
                in_flight = Some((send.send_id, now));
            }
        }
    }
    let _ = engine.push(Input::Finish, Time::from_millis(now));
});
