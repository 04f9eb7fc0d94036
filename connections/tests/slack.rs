//! The Slack connection against a fake Web API on loopback.
#![allow(clippy::disallowed_methods)] // real servers, real time

mod fake;

use std::time::Duration;

use fake::slack::{FakeSlack, Fault};
use fake::{failure, prose, send, stream_words};
use replystream::driver::{Driver, DriverOptions};
use replystream::{ChannelProfile, Config, MessageKey, Payload, ReplyTarget, SendOp};
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
