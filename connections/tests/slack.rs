//! The Slack connection against a fake Web API on loopback.
#![allow(clippy::disallowed_methods)] // real servers, real time

mod fake;

use std::time::Duration;

use fake::slack::{FakeSlack, Fault, Message};
use fake::{failure, prose, send, stream_words};
use replystream::driver::{Driver, DriverOptions, StreamEvent};
use replystream::{
    AbortReason, ChannelProfile, Config, Format, MessageKey, OwnedInput, Payload, PreviewMode,
    PreviewTransport, ReasoningMode, ReplyTarget, SendId, SendKind, SendOp, SendRequest,
};
use replystream_connections::sink::PlatformSink;
use replystream_connections::slack::Slack;
use replystream_connections::{HttpOptions, Outcome, Platform};

const TOKEN: &str = "xoxb-slack-SECRET";

fn bot(fake: &FakeSlack) -> Slack {
    Slack::with_options(TOKEN, &fake.url(), &HttpOptions::default())
}

#[test]
fn post_update_delete_and_threads() {
    let fake = FakeSlack::start(TOKEN, &["C1"]);
    let sl = bot(&fake);
    let key = MessageKey(0);
    let payload = Payload {
        text: "*bold* in mrkdwn\r\nand a link".into(),
        media: vec!["https://example.com/x.png".into()],
        reply_to: Some(ReplyTarget::Id("1699999999.000001".into())),
        ..Payload::default()
    };
    let created = sl.deliver(
        "C1",
        &send(SendOp::Create { key: Some(key) }, payload, None),
    );
    let Outcome::Delivered {
        message_ref: Some(ts),
    } = created
    else {
        panic!("{created:?}")
    };
    let m = &fake.messages("C1")[0];
    assert_eq!(
        m.text,
        "*bold* in mrkdwn\r\nand a link\nhttps://example.com/x.png"
    );
    assert_eq!(m.thread_ts.as_deref(), Some("1699999999.000001"));
    let edit = send(SendOp::Edit { key }, Payload::text("new"), Some(&ts));
    assert_eq!(
        sl.deliver("C1", &edit),
        Outcome::delivered(Some(ts.clone()))
    );
    assert_eq!(fake.texts("C1"), ["new"]);
    let delete = send(SendOp::Delete { key }, Payload::default(), Some(&ts));
    assert!(sl.deliver("C1", &delete).is_delivered());
    assert!(
        sl.deliver("C1", &delete).is_delivered(),
        "message_not_found: gone"
    );
    assert!(fake.texts("C1").is_empty());
}

#[test]
fn retry_after_transient_errors_and_permanent_ones() {
    let fake = FakeSlack::start(TOKEN, &["C1"]);
    let sl = bot(&fake);
    let hi = send(SendOp::CREATE, Payload::text("hi"), None);
    fake.fail_next(Fault::RateLimit(2));
    let f = failure(sl.deliver("C1", &hi));
    assert_eq!(
        (f.retry_after_ms, f.permanent),
        (Some(2000), false),
        "{f:?}"
    );
    let fake = FakeSlack::start(TOKEN, &["C1"]);
    let sl = bot(&fake);
    fake.fail_next(Fault::Error("internal_error"));
    assert!(!failure(sl.deliver("C1", &hi)).permanent);
    let f = failure(sl.deliver("C404", &hi));
    assert!(
        f.permanent && f.reason.contains("channel_not_found"),
        "{f:?}"
    );
    let wrong = Slack::with_options("xoxb-WRONG", &fake.url(), &HttpOptions::default());
    let f = failure(wrong.deliver("C1", &hi));
    assert!(f.permanent && f.reason.contains("invalid_auth") && !f.reason.contains("WRONG"));
    let local = Payload {
        media: vec!["/tmp/nowhere/report.pdf".into()],
        ..Payload::text("see file")
    };
    let f = failure(sl.deliver("C1", &send(SendOp::CREATE, local, None)));
    assert!(f.permanent && f.reason.contains("report.pdf"), "{f:?}");
}

#[test]
fn a_streamed_reply_waits_out_a_429_and_arrives_whole() {
    let fake = FakeSlack::start(TOKEN, &["C9"]);
    let mut config = Config::for_channel(&ChannelProfile::by_name("slack").unwrap());
    config.chunk_min = 150;
    config.chunk_max = 400;
    config.coalesce_min = Some(150);
    config.coalesce_max = Some(400);
    fake.fail_next(Fault::RateLimit(1));
    let text = prose(1600);
    let driver = Driver::spawn(PlatformSink::new(bot(&fake)), DriverOptions::default());
    stream_words(&driver, "C9", config, text, Duration::ZERO);
    assert!(driver.shutdown(Duration::from_secs(20)).is_clean());
    let texts = fake.texts("C9");
    assert!(texts.len() >= 4, "{texts:?}");
    fake::tiles(text, &texts).unwrap();
    let st = fake.state.lock().unwrap();
    assert_eq!(st.early_calls, 0, "a retry came early");
    assert_eq!(st.log.iter().filter(|l| l.1 == 429).count(), 1);
}

/// The user message the reply answers (a thread's parent): streamed previews need one.
const ASKED: &str = "1699999999.000001";

/// Slack's settings with live previews through its native streaming.
fn streaming_config() -> Config {
    let mut config = Config::for_channel(&ChannelProfile::by_name("slack").unwrap());
    config.preview = PreviewMode::Partial;
    config.preview_transport = PreviewTransport::Draft;
    config.preview_throttle_ms = 250;
    config
}

/// Streams `text` as a reply to `ASKED` into `chat` with previews on, and waits until done.
fn stream_reply(fake: &FakeSlack, chat: &str, config: Config, text: &str, pause_ms: u64) {
    let driver = Driver::spawn(PlatformSink::new(bot(fake)), DriverOptions::default());
    let reply = format!("[[reply_to: {ASKED}]] {text}");
    stream_words(
        &driver,
        chat,
        config,
        &reply,
        Duration::from_millis(pause_ms),
    );
    assert!(driver.shutdown(Duration::from_secs(20)).is_clean());
}

fn methods(fake: &FakeSlack) -> Vec<String> {
    fake.calls().into_iter().map(|(m, _)| m).collect()
}

#[test]
fn a_draft_preview_streams_natively_and_the_final_lands_once_despite_a_429() {
    let fake = FakeSlack::start(TOKEN, &["C9"]);
    fake.fail_next_call_to("chat.appendStream", Fault::RateLimit(1));
    let text = prose(1500);
    // Words 10 ms apart: the reply takes about 2.5 s, the 429 pauses the preview for 1 s.
    stream_reply(&fake, "C9", streaming_config(), text, 10);
    let msgs = fake.messages("C9");
    assert_eq!(msgs.len(), 1, "the reply shows once: {msgs:?}");
    let m = &msgs[0];
    assert_eq!(m.text, text.trim_end());
    assert!(m.streamed && !m.streaming, "{m:?}");
    assert_eq!(m.thread_ts.as_deref(), Some(ASKED));
    assert!(m.appends >= 2, "the preview moved by appends: {m:?}");
    assert_eq!(m.edits, 0, "never fell back to chat.update: {m:?}");
    let calls = fake.calls();
    let names = methods(&fake);
    assert_eq!(names[0], "chat.startStream", "{calls:?}");
    assert_eq!(names.last().unwrap(), "chat.stopStream", "{calls:?}");
    assert!(
        names[1..names.len() - 1]
            .iter()
            .all(|m| m == "chat.appendStream"),
        "{calls:?}"
    );
    assert_eq!(calls.iter().filter(|c| c.1 == 429).count(), 1, "{calls:?}");
    assert!(calls.iter().all(|c| c.1 == 200 || c.1 == 429), "{calls:?}");
    assert_eq!(
        fake.state.lock().unwrap().early_calls,
        0,
        "a retry came early"
    );
}

#[test]
fn a_tail_window_preview_stops_the_stream_and_edits_and_the_final_is_exact() {
    let fake = FakeSlack::start(TOKEN, &["C9"]);
    let mut config = streaming_config();
    // Past 400 characters the preview shows a tail window: no longer an extension.
    config.preview_limit = 400;
    let text = prose(1500);
    stream_reply(&fake, "C9", config, text, 3);
    let msgs = fake.messages("C9");
    assert_eq!(msgs.len(), 1, "{msgs:?}");
    assert_eq!(msgs[0].text, text.trim_end());
    assert!(msgs[0].edits >= 1 && !msgs[0].streaming, "{msgs:?}");
    let names = methods(&fake);
    let stop = names.iter().position(|m| m == "chat.stopStream").unwrap();
    assert!(
        names[..stop].iter().all(|m| m != "chat.update"),
        "{names:?}"
    );
    assert!(
        names[stop + 1..].iter().all(|m| m == "chat.update"),
        "{names:?}"
    );
    assert_eq!(names.iter().filter(|m| *m == "chat.stopStream").count(), 1);
    assert!(!names.iter().any(|m| m == "chat.postMessage"), "{names:?}");
}

#[test]
fn a_stream_slack_closed_falls_back_to_an_edit_and_the_final_is_exact() {
    let fake = FakeSlack::start(TOKEN, &["C9"]);
    fake.fail_next_call_to("chat.appendStream", Fault::CloseStreams);
    let text = prose(1200);
    stream_reply(&fake, "C9", streaming_config(), text, 3);
    let msgs = fake.messages("C9");
    assert_eq!(msgs.len(), 1, "{msgs:?}");
    assert_eq!(msgs[0].text, text.trim_end());
    let calls = fake.calls();
    assert!(
        calls.contains(&("chat.update".to_owned(), 200)),
        "{calls:?}"
    );
}

fn preview(id: u64, op: SendOp, text: &str, message_ref: Option<&str>) -> SendRequest {
    let payload = Payload {
        reply_to: Some(ReplyTarget::Id(ASKED.into())),
        ..Payload::text(text)
    };
    SendRequest::new(
        SendId(id),
        SendKind::Preview,
        op,
        payload,
        message_ref.map(str::to_owned),
    )
}

fn final_send(id: u64, text: &str) -> SendRequest {
    SendRequest::new(
        SendId(id),
        SendKind::Final,
        SendOp::CREATE,
        Payload::text(text),
        None,
    )
}

fn delivered_ts(outcome: Outcome) -> String {
    match outcome {
        Outcome::Delivered {
            message_ref: Some(ts),
        } => ts,
        other => panic!("{other:?}"),
    }
}

#[test]
fn drafts_map_to_start_append_stop_and_retries_after_a_lost_answer_stay_exact() {
    let fake = FakeSlack::start(TOKEN, &["C1"]);
    let sl = bot(&fake);
    let key = MessageKey(3);
    let draft = SendOp::Draft { key };
    // The cursor is not streamed; `<` is escaped as in any message.
    let ts = delivered_ts(sl.deliver("C1", &preview(1, draft, "a < b\u{2588}", None)));
    assert_eq!(fake.texts("C1"), ["a < b"]);
    let again = sl.deliver("C1", &preview(2, draft, "a < b, c\u{2588}", Some(&ts)));
    assert_eq!(again, Outcome::delivered(Some(ts.clone())));
    // Identical text: nothing to append, no call.
    let calls = fake.calls().len();
    let same = sl.deliver("C1", &preview(3, draft, "a < b, c\u{2588}", Some(&ts)));
    assert!(same.is_delivered());
    assert_eq!(fake.calls().len(), calls);
    // The final's stop is carried out but its answer is lost: the engine retries the final.
    fake.fail_next_call_to("chat.stopStream", Fault::LoseAnswer);
    let fin = final_send(4, "a < b, c and d");
    assert!(!failure(sl.deliver("C1", &fin)).permanent);
    assert_eq!(delivered_ts(sl.deliver("C1", &fin)), ts);
    let msgs = fake.messages("C1");
    assert_eq!(msgs.len(), 1, "{msgs:?}");
    assert_eq!(msgs[0].text, "a < b, c and d");
    assert!(!msgs[0].streaming);
    assert_eq!(
        methods(&fake),
        [
            "chat.startStream",
            "chat.appendStream",
            "chat.stopStream",
            "chat.stopStream",
            "chat.update"
        ]
    );
    // The preview was consumed: the next final is a message of its own.
    let next = delivered_ts(sl.deliver("C1", &final_send(5, "second")));
    assert_ne!(next, ts);
    assert_eq!(fake.texts("C1"), ["a < b, c and d", "second"]);
}

#[test]
fn a_draft_with_no_thread_is_a_posted_message_edited_into_the_final() {
    let fake = FakeSlack::start(TOKEN, &["C1"]);
    let sl = bot(&fake).with_preview_cursor(None);
    let draft = SendOp::Draft { key: MessageKey(0) };
    let first = SendRequest::new(
        SendId(1),
        SendKind::Preview,
        draft,
        Payload::text("Hel"),
        None,
    );
    let ts = delivered_ts(sl.deliver("C1", &first));
    let fin = final_send(2, "Hello, world");
    assert_eq!(delivered_ts(sl.deliver("C1", &fin)), ts);
    assert_eq!(fake.texts("C1"), ["Hello, world"]);
    assert_eq!(
        methods(&fake),
        ["chat.postMessage", "chat.update"],
        "no stream without a thread"
    );
    // A silent reply deletes its preview; a later final is posted.
    let ts = delivered_ts(sl.deliver("C1", &first));
    let delete = SendRequest::new(
        SendId(3),
        SendKind::Preview,
        SendOp::Delete { key: MessageKey(0) },
        Payload::default(),
        Some(ts.clone()),
    );
    assert!(sl.deliver("C1", &delete).is_delivered());
    let other = delivered_ts(sl.deliver("C1", &final_send(4, "later")));
    assert_ne!(other, ts);
    assert_eq!(fake.texts("C1"), ["Hello, world", "later"]);
}

#[test]
fn reply_to_current_threads_the_reply_and_a_draft_preview_streams_in_that_thread() {
    let fake = FakeSlack::start(TOKEN, &["C5"]);
    let sink = PlatformSink::new(bot(&fake));
    let current = sink.current_messages();
    let driver = Driver::spawn(sink, DriverOptions::default());
    // Blocks, replying to the current message by the model's tag.
    let config = Config::for_channel(&ChannelProfile::by_name("slack").unwrap());
    let blocks = driver.open("C5", config, 7).unwrap();
    current.set(blocks.id(), "1700000000.000777");
    blocks.text("[[reply_to_current]] In the thread.").unwrap();
    blocks.finish().unwrap();
    // A streamed preview with no tag at all: Slack streams only in threads, so it goes in
    // the thread of the message the turn answers.
    let previews = driver.open("C5", streaming_config(), 8).unwrap();
    current.set(previews.id(), "1700000000.000888");
    let text = prose(700);
    for word in text.split_inclusive(' ') {
        previews.text(word).unwrap();
        std::thread::sleep(Duration::from_millis(3));
    }
    previews.finish().unwrap();
    assert!(driver.shutdown(Duration::from_secs(20)).is_clean());
    let msgs = fake.messages("C5");
    assert_eq!(msgs.len(), 2, "{msgs:?}");
    assert_eq!(msgs[0].text, "In the thread.");
    assert_eq!(msgs[0].thread_ts.as_deref(), Some("1700000000.000777"));
    assert!(!msgs[0].streamed);
    assert_eq!(msgs[1].text, text.trim_end());
    assert_eq!(msgs[1].thread_ts.as_deref(), Some("1700000000.000888"));
    assert!(msgs[1].streamed && !msgs[1].streaming, "{msgs:?}");
}

#[test]
fn a_reply_with_code_blocks_streams_without_falling_back() {
    let fake = FakeSlack::start(TOKEN, &["C9"]);
    // While a block is open the preview ends with a closing fence the engine added: the
    // connection must not stream it, or the next update would not extend the stream.
    let text = "Here is the fix, in two files:\n\n```rust\nfn main() {\n    let total = parts \
                .iter()\n        .map(|p| p.len())\n        .sum::<usize>();\n    println!(\"{total}\");\n}\n```\n\n\
                And the script that runs it, with ~~~ fences this time:\n\n~~~sh\ncargo run --release \
                -- --input data/a.txt --output out/b.txt\necho done: 漢字 👩‍👩‍👧\n~~~\n\nThat is all \
                there is to it; the tests pass with both changes applied, and nothing else moves.";
    stream_reply(&fake, "C9", streaming_config(), text, 15);
    let msgs = fake.messages("C9");
    assert_eq!(msgs.len(), 1, "{msgs:?}");
    assert_eq!(msgs[0].text, text);
    assert!(msgs[0].appends >= 2, "{msgs:?}");
    assert_eq!(
        msgs[0].edits,
        0,
        "fell back to chat.update: {:?}",
        fake.calls()
    );
}

#[test]
fn with_reasoning_shown_the_answer_not_the_reasoning_goes_into_the_stream() {
    let fake = FakeSlack::start(TOKEN, &["C9"]);
    let mut config = streaming_config();
    config.reasoning = ReasoningMode::On;
    let sink = PlatformSink::new(bot(&fake));
    let current = sink.current_messages();
    let driver = Driver::spawn(sink, DriverOptions::default());
    let stream = driver.open("C9", config, 7).unwrap();
    current.set(stream.id(), ASKED);
    let thinking = "The user asks about pools; sizes, timeouts and measuring matter most.";
    for word in thinking.split_inclusive(' ') {
        stream.push(OwnedInput::ThinkingDelta(word.into())).unwrap();
        std::thread::sleep(Duration::from_millis(5));
    }
    stream.push(OwnedInput::ThinkingEnd).unwrap();
    let text = prose(900);
    for word in text.split_inclusive(' ') {
        stream.text(word).unwrap();
        std::thread::sleep(Duration::from_millis(4));
    }
    stream.finish().unwrap();
    assert!(driver.shutdown(Duration::from_secs(20)).is_clean());
    let msgs = fake.messages("C9");
    let answers: Vec<&Message> = msgs.iter().filter(|m| m.text == text.trim_end()).collect();
    assert_eq!(answers.len(), 1, "the answer shows once: {msgs:?}");
    assert!(answers[0].streamed && !answers[0].streaming, "{msgs:?}");
    let reasoning: Vec<&Message> = msgs
        .iter()
        .filter(|m| m.text.contains("pools; sizes"))
        .collect();
    assert_eq!(reasoning.len(), 1, "the reasoning shows once: {msgs:?}");
    assert!(
        !reasoning[0].text.contains("connection pooling"),
        "{msgs:?}"
    );
    assert!(
        msgs.iter().all(|m| !m.streaming),
        "no stream left open: {msgs:?}"
    );
}

#[test]
fn a_cancelled_turn_does_not_leave_its_preview_streaming() {
    let fake = FakeSlack::start(TOKEN, &["C9"]);
    let (ended_tx, ended_rx) = std::sync::mpsc::channel();
    let sink = PlatformSink::new(bot(&fake)).on_event(move |_, event| {
        // A cancelled turn ends at its abort (it never goes idle).
        if matches!(event, StreamEvent::Aborted(AbortReason::Cancelled)) {
            let _ = ended_tx.send(());
        }
    });
    let current = sink.current_messages();
    let driver = Driver::spawn(sink, DriverOptions::default());
    let stream = driver.open("C9", streaming_config(), 7).unwrap();
    current.set(stream.id(), ASKED);
    for word in prose(600).split_inclusive(' ') {
        stream.text(word).unwrap();
        std::thread::sleep(Duration::from_millis(4));
    }
    let started = fake.messages("C9");
    assert!(started.len() == 1 && started[0].streaming, "{started:?}");
    stream.cancel().unwrap();
    ended_rx.recv_timeout(Duration::from_secs(10)).unwrap();
    // The stop goes out after the turn's last send, on a worker: wait for it (bounded).
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while fake.messages("C9")[0].streaming && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(driver.shutdown(Duration::from_secs(5)).is_clean());
    let msgs = fake.messages("C9");
    assert_eq!(msgs.len(), 1, "{msgs:?}");
    assert!(
        !msgs[0].streaming,
        "the stream was stopped: {:?}",
        fake.calls()
    );
    assert!(prose(600).starts_with(&msgs[0].text), "{msgs:?}");
    assert_eq!(
        fake.calls().last().map(|c| c.0.as_str()),
        Some("chat.stopStream")
    );
}

/// A reply with Markdown a Slack user must not see raw, and a ping a model must not make.
const STYLED: &str =
    "**Done** & <!channel>: see [the docs](https://example.com/a?b=1&c=2) and `x`, ~~old~~ *new*.";

/// What Slack shows for `STYLED`, in mrkdwn, written by hand.
const STYLED_MRKDWN: &str = "*Done* &amp; &lt;!channel&gt;: see \
<https://example.com/a?b=1&amp;c=2|the docs> and `x`, ~old~ _new_.";

/// Slack's rule for mrkdwn: `<` and `>` only around a link or mention, `&` only as one of
/// the three entities.
fn bare_control_characters(mrkdwn: &str) -> Vec<String> {
    let mut bad = Vec::new();
    let mut rest = mrkdwn;
    while let Some(i) = rest.find(['<', '>', '&']) {
        rest = &rest[i..];
        if rest.starts_with('<') {
            match rest.find('>') {
                Some(end) if rest[1..end].starts_with("http") && !rest[1..end].contains('<') => {
                    rest = &rest[end + 1..];
                }
                _ => {
                    bad.push(rest.chars().take(12).collect());
                    rest = &rest[1..];
                }
            }
        } else if rest.starts_with('&') {
            let entity = ["&amp;", "&lt;", "&gt;"]
                .iter()
                .find(|e| rest.starts_with(**e));
            if entity.is_none() {
                bad.push(rest.chars().take(12).collect());
            }
            rest = &rest[1..];
        } else {
            bad.push(rest.chars().take(12).collect());
            rest = &rest[1..];
        }
    }
    bad
}

#[test]
fn the_slack_profile_posts_mrkdwn_and_nothing_shows_raw_or_pings() {
    let fake = FakeSlack::start(TOKEN, &["C9"]);
    let config = Config::for_channel(&ChannelProfile::by_name("slack").unwrap());
    assert_eq!(config.format, Format::SlackMrkdwn);
    let driver = Driver::spawn(PlatformSink::new(bot(&fake)), DriverOptions::default());
    stream_words(&driver, "C9", config, STYLED, Duration::ZERO);
    assert!(driver.shutdown(Duration::from_secs(20)).is_clean());
    let msgs = fake.messages("C9");
    assert_eq!(msgs.len(), 1, "{msgs:?}");
    assert_eq!(msgs[0].markup, "mrkdwn");
    assert_eq!(msgs[0].raw, STYLED_MRKDWN);
    assert_eq!(bare_control_characters(&msgs[0].raw), Vec::<String>::new());
    assert!(msgs[0].pings.is_empty(), "{msgs:?}");
}

#[test]
fn a_posted_preview_is_mrkdwn_and_a_native_stream_is_markdown() {
    // No thread to stream in: the preview is a posted message, edited into the final.
    let fake = FakeSlack::start(TOKEN, &["C1"]);
    let driver = Driver::spawn(PlatformSink::new(bot(&fake)), DriverOptions::default());
    stream_words(
        &driver,
        "C1",
        streaming_config(),
        STYLED,
        Duration::from_millis(40),
    );
    assert!(driver.shutdown(Duration::from_secs(20)).is_clean());
    let msgs = fake.messages("C1");
    assert_eq!(msgs.len(), 1, "{msgs:?}");
    assert!(!msgs[0].streamed);
    assert_eq!(
        (msgs[0].markup, msgs[0].raw.as_str()),
        ("mrkdwn", STYLED_MRKDWN)
    );
    assert!(msgs[0].pings.is_empty());
    // In a thread: Slack's streaming methods read Markdown, so the stream carries Markdown
    // (`&`, `<` and `>` escaped all the same), and the final goes into it.
    let fake = FakeSlack::start(TOKEN, &["C2"]);
    stream_reply(&fake, "C2", streaming_config(), STYLED, 40);
    let msgs = fake.messages("C2");
    assert_eq!(msgs.len(), 1, "{msgs:?}");
    assert!(msgs[0].streamed);
    assert_eq!(msgs[0].markup, "markdown");
    assert_eq!(
        msgs[0].raw,
        "**Done** &amp; &lt;!channel&gt;: see [the docs](https://example.com/a?b=1&amp;c=2) \
         and `x`, ~~old~~ *new*."
    );
    assert!(msgs[0].pings.is_empty());
}
